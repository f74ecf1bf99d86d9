// HarborXPC — what a publisher does when one subscriber falls behind.

/// What an ``XPCPublisher`` does when one subscriber takes its events more
/// slowly than they are published. Each subscriber has a backlog of its own
/// in the publisher (at most `keep` events) in front of its own port (whose
/// queue limit the subscriber chose); a full backlog is that subscriber's
/// problem only: ``XPCPublisher/publish(_:)`` never waits, and every other
/// subscriber goes on receiving.
///
/// ```swift
/// let ticks = try XPCPublisher<Tick>(policy: .dropOldest(keep: 8))      // a clock: the latest matter
/// let log = try XPCPublisher<Line>(policy: .wait(keep: 4096, timeout: .seconds(30)))  // nothing lost
/// ```
///
/// **Thread safety:** a value; any thread.
public enum XPCStreamPolicy: Sendable, Hashable {
    /// A full backlog loses its oldest event to make room for the new one:
    /// a subscriber that comes back gets the latest `keep` events (plus what
    /// its port held). For state, where only the latest matters.
    case dropOldest(keep: Int)
    /// A full backlog loses the new event: a subscriber that comes back gets
    /// the first events it missed, and none after its backlog filled.
    case dropNewest(keep: Int)
    /// Nothing is lost while the subscriber keeps up within bounds: its
    /// events wait in its backlog (at most `keep`) while its port is full.
    /// When the backlog overflows, or its port stays full for `timeout`,
    /// the publisher ends that subscription: the subscriber's stream gives
    /// what its port held, then throws
    /// ``XPCRichError/Code/connectionInvalid`` with the reason.
    case wait(keep: Int, timeout: Duration)

    /// The most events a subscriber's backlog holds (at least 1).
    var keep: Int {
        switch self {
        case .dropOldest(let keep), .dropNewest(let keep), .wait(let keep, _): max(1, keep)
        }
    }

    /// How long one send waits for room in the subscriber's port: as long
    /// as it takes for the drop policies (the backlog absorbs the rest).
    var sendTimeout: Duration? {
        if case .wait(_, let timeout) = self { return timeout }
        return nil
    }
}
