// Harbor — the name server's pause after accept finds no descriptor left: doubling, logged once per episode.

/// How long the name server stops accepting when `accept` fails for lack of
/// descriptors (`EMFILE`, `ENFILE`), and which of those failures it logs.
///
/// The listener stays readable while the table is full, so the server must
/// stop watching it for a while; retrying every 100 ms would also log a line
/// every 100 ms for as long as the table stays full. An *episode* starts at
/// the first such failure: that one is logged, and the server pauses
/// ``first``. Each further failure doubles the pause, up to ``longest``, and
/// is only counted. The first connection accepted again ends the episode:
/// the server logs that it recovered, with the count of failures not
/// logged, and the next failure starts a new episode at ``first``.
///
/// A pure value: the server keeps one and asks it at each accept.
package struct AcceptBackoff: Sendable, Equatable {
    /// The pause after an episode's first failure.
    package static let first: Duration = .milliseconds(100)
    /// The longest pause, however long the table stays full.
    package static let longest: Duration = .seconds(5)

    /// The pause after the latest failure; nil when no episode is going on.
    package private(set) var pause: Duration?
    /// Failures in this episode after its first: counted, not logged.
    package private(set) var suppressed = 0

    /// A backoff with no episode going on.
    package init() {}

    /// `accept` failed for lack of descriptors.
    /// - Returns: how long to stop accepting, and whether to log this
    ///   failure (only an episode's first is logged).
    package mutating func failed() -> (pause: Duration, log: Bool) {
        guard let previous = pause else {
            pause = Self.first
            return (Self.first, true)
        }
        let next = min(previous * 2, Self.longest)
        pause = next
        suppressed += 1
        return (next, false)
    }

    /// `accept` took a connection: ends the episode, if one is going on.
    /// - Returns: nil when none was (nothing to log), else the count of the
    ///   episode's failures that were not logged (for the recovery's line).
    package mutating func succeeded() -> Int? {
        guard pause != nil else { return nil }
        defer { self = AcceptBackoff() }
        return suppressed
    }
}
