// Harbor — why a message from another process was not queued (P12).
import HarborSystem

/// Why admission refused a message another process sent: its uid is past
/// what it may make this process hold. The transport counts each refusal
/// as a wire rejection of the same name (`WireRejectionReason`).
package enum AdmissionRefusal: Equatable, Sendable {
    /// Past the queue: more messages over the limit than a uid may have,
    /// or a queue flooded past its headroom.
    case flood
    /// Past a per-uid limit on what queued messages hold (descriptors,
    /// region bytes, bodies of moved queues).
    case overLimit
}
