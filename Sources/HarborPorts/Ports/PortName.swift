// Harbor — how a port is told apart from every other port.
import Synchronization
import HarborSystem

/// The identity of a port: equal for every right to the same port.
///
/// Like a Mach port name it identifies without granting anything: there is no
/// way to turn a `PortName` (or any integer) back into a right. Unique for
/// the life of the process; never reused.
public struct PortName: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// A number unique within this process, for logs and ordering.
    public let rawValue: UInt64

    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package static func next() -> PortName {
        PortName(rawValue: counter.add(1, ordering: .relaxed).newValue)
    }
    private static let counter = Atomic<UInt64>(0)

    public static func < (lhs: PortName, rhs: PortName) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "port#\(rawValue)" }
}
