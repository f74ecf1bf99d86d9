// Harbor — what one uid's queued messages hold on one port (P12).
import HarborSystem

/// What one uid's queued messages hold on one port.
package struct PeerUsage: Equatable, Sendable {
    /// Messages queued past the port's limit (counted ones; uncounted ones
    /// past the flood headroom).
    package var overLimit = 0
    package var descriptors = 0
    /// Bytes of out-of-line regions (sealed memfds and copied regions).
    package var regionBytes = 0
    /// Bytes of inline bodies queued in the receive rights the messages
    /// moved here (their queues; a queue nested deeper is charged on the
    /// ledger of the moved port holding it, so each body once). Also
    /// charged over every port of the process (`movedInline`).
    package var inlineBytes = 0

    package init(overLimit: Int = 0, descriptors: Int = 0, regionBytes: Int = 0, inlineBytes: Int = 0) {
        self.overLimit = overLimit
        self.descriptors = descriptors
        self.regionBytes = regionBytes
        self.inlineBytes = inlineBytes
    }

    package static func + (lhs: PeerUsage, rhs: PeerUsage) -> PeerUsage {
        PeerUsage(overLimit: lhs.overLimit + rhs.overLimit, descriptors: lhs.descriptors + rhs.descriptors,
                  regionBytes: lhs.regionBytes + rhs.regionBytes, inlineBytes: lhs.inlineBytes + rhs.inlineBytes)
    }

    package static func - (lhs: PeerUsage, rhs: PeerUsage) -> PeerUsage {
        PeerUsage(overLimit: lhs.overLimit - rhs.overLimit, descriptors: lhs.descriptors - rhs.descriptors,
                  regionBytes: lhs.regionBytes - rhs.regionBytes, inlineBytes: lhs.inlineBytes - rhs.inlineBytes)
    }

    package var isZero: Bool { self == PeerUsage() }
}
