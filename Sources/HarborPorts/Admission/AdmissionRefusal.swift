// Harbor — why a message from another process was not queued (P12).
import HarborSystem

/// Why admission refused a message another process sent: its uid is past
/// what it may make this process hold. The transport counts each refusal
/// as a wire rejection of the same name (`WireRejectionReason`).
@usableFromInline
package enum AdmissionRefusal: Equatable, Sendable {
    /// Past the queue: more messages over the limit than a uid may have,
    /// or a queue flooded past its headroom.
    case flood
    /// Past a per-uid limit on what queued messages hold (descriptors,
    /// region bytes, bodies of moved queues).
    case overLimit
}

/// How many messages admission refused, by reason: counts, so admitting
/// costs no array (refusals are rare; the transport counts each).
@usableFromInline
package struct AdmissionRefusals: Sendable {
    /// Refused as a flood.
    @usableFromInline package var flood = 0
    /// Refused past a per-uid limit.
    @usableFromInline package var overLimit = 0

    @inlinable package init() {}

    /// Counts one refusal.
    @inlinable package mutating func append(_ refusal: AdmissionRefusal) {
        switch refusal {
        case .flood: flood += 1
        case .overLimit: overLimit += 1
        }
    }

    /// Every refusal counted.
    @inlinable package var count: Int { flood + overLimit }
}
