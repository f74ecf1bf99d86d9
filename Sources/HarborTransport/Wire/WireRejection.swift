// Harbor — why a packet from another process was refused, and how often.
import HarborSystem
import HarborPorts

/// One refused packet: a typed reason and a sentence for logs. Thrown by the
/// decoder; the transport counts it and drops the packet (closing every
/// descriptor that came with it), then carries on.
package struct WireRejection: Error, Sendable, CustomStringConvertible {
    package let reason: WireRejectionReason
    package let detail: String

    package init(_ reason: WireRejectionReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    package var description: String { "\(reason): \(detail)" }
}

/// The kinds of bad input the decoder recognises (P09).
public enum WireRejectionReason: Int, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// Fewer bytes than a header or a declared length needs.
    case truncated
    /// The packet was longer than the receive buffer (MSG_TRUNC).
    case oversized
    /// A version byte this build does not speak.
    case unknownVersion
    /// An unknown packet kind, right kind or flag bit.
    case unknownKind
    /// Declared lengths or counts disagree with each other or the packet.
    case badLength
    /// More or fewer descriptors arrived than the packet declares, or a
    /// descriptor is referenced twice or not at all.
    case descriptorMismatch
    /// Control data was cut short (MSG_CTRUNC): descriptors may be missing.
    case controlTruncated
    /// A descriptor is not what its slot says (not a memfd, not sealed, wrong size).
    case badDescriptor
    /// The kernel attached no credentials.
    case missingCredentials
    /// Receive rights nested deeper than the format allows.
    case tooDeep
    /// A queue would exceed Mach's hard limit: a sender is ignoring back-pressure.
    case flood
    /// A fragment without a message to belong to, more bytes than declared,
    /// or more fragmented messages at once than a connection may carry.
    case badFragment
    /// A memory file lacks one of `F_SEAL_WRITE`, `F_SEAL_SHRINK`,
    /// `F_SEAL_GROW`, `F_SEAL_SEAL` (`F_SEAL_FUTURE_WRITE` does not stand in
    /// for `F_SEAL_WRITE`: the sender may still hold a writable mapping).
    case unsealed
    /// A right whose possession was not proven (P11): it names a port by an
    /// identity this process already knows, but its descriptors are not
    /// that port's (a receive right for a port received here, or for a
    /// proxy whose connection is not among the ones it brings). The port it
    /// names is untouched.
    case forgedRight
    /// A peer went over one of its per-connection or per-uid limits (P12):
    /// descriptors, bytes of partial messages, regions, waiters.
    case overLimit

    public var description: String {
        switch self {
        case .truncated: "truncated"
        case .oversized: "oversized"
        case .unknownVersion: "unknown version"
        case .unknownKind: "unknown kind"
        case .badLength: "bad length"
        case .descriptorMismatch: "descriptor mismatch"
        case .controlTruncated: "control data truncated"
        case .badDescriptor: "bad descriptor"
        case .missingCredentials: "missing credentials"
        case .tooDeep: "nested too deep"
        case .flood: "flood"
        case .badFragment: "bad fragment"
        case .unsealed: "insufficiently sealed memory"
        case .forgedRight: "forged right"
        case .overLimit: "over a peer limit"
        }
    }
}

/// Process-wide counts of refused packets, by reason.
///
/// **Thread safety:** any thread (atomics).
public enum WireRejections {
    private static let counters = HarborLock([Int](repeating: 0, count: WireRejectionReason.allCases.count))

    /// How many packets were refused for `reason` since the process started.
    public static func count(_ reason: WireRejectionReason) -> Int {
        counters.withLockedValue { $0[reason.rawValue] }
    }

    /// All refusals, every reason together.
    public static var total: Int {
        WireRejectionReason.allCases.reduce(0) { $0 + count($1) }
    }

    package static func record(_ reason: WireRejectionReason) {
        counters.withLockedValue { $0[reason.rawValue] += 1 }
    }
}

extension WireRejections {
    /// Counts the messages admission refused (HarborPorts' `PortCore.admit`),
    /// each as the wire rejection of the same name.
    package static func record(_ refusals: AdmissionRefusals) {
        for _ in 0..<refusals.flood { record(.flood) }
        for _ in 0..<refusals.overLimit { record(.overLimit) }
    }
}
