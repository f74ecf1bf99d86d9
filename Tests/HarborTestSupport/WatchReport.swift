// Harbor — test support: what the watchdog did to one watched piece of work.
/// What ``TestWatchdog`` saw and did while it watched one piece of work
/// (a test, through ``TestDeadline``).
public struct WatchReport: Sendable {
    /// The name the work was watched under (the test's).
    public let name: String
    /// The time it was allowed.
    public let limit: Duration
    /// How long it ran.
    public let elapsed: Duration
    /// Whether it was still running at its deadline.
    public let expired: Bool
    /// The processes below the test process at the deadline (empty unless
    /// it expired), as they were then; those still running were killed.
    public let processesAtDeadline: [RelatedProcess]
}
