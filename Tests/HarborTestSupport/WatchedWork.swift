// Harbor — test support: one piece of work the watchdog watches.
/// A test (or other work) ``TestWatchdog`` watches, and what it did to it.
struct WatchedWork: Sendable {
    let name: String
    let limit: Duration
    let started: ContinuousClock.Instant
    /// When the deadline passed and the watchdog acted; nil before.
    var expiredAt: ContinuousClock.Instant?
    /// The processes below the test process at the deadline.
    var processesAtDeadline: [RelatedProcess] = []
}
