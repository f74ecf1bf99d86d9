// Harbor — test support: an ordered log of what happened, written from any thread.
import HarborPorts
import HarborSystem

/// An ordered log of events, appended to from any thread, for asserting
/// the order things happened in.
public final class EventLog: Sendable {
    private let entries = HarborLock<[String]>([])

    public init() {}

    /// Adds `entry` at the end.
    public func append(_ entry: String) { entries.withLock { $0.append(entry) } }

    /// Every entry so far, oldest first.
    public var all: [String] { entries.withLock { $0 } }

    /// How many entries equal `entry`.
    public func count(of entry: String) -> Int { all.filter { $0 == entry }.count }
}
