// Harbor — test support: tests that only root can run, skipped the same way otherwise.
import Glibc
import Testing

/// Whether this process runs as root (effective uid 0): only root can start
/// a child as another uid (`setpriv`), which the multi-user tests need.
public let runsAsRoot = geteuid() == 0

extension Trait where Self == ConditionTrait {
    /// Runs the test (or every test of the suite) only as root; anyone
    /// else skips it, with "needs root: `why`" as the reason.
    public static func requiresRoot(_ why: String) -> Self {
        .enabled(if: runsAsRoot, Comment(rawValue: "needs root: \(why)"))
    }
}
