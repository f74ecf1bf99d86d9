// Harbor — test support: a deadline a stuck test fails by, instead of stalling the run.
import Testing

/// A trait that gives each test it applies to a deadline enforced by
/// ``TestWatchdog``: a test still running at its deadline has the processes
/// below the test process killed (so a wait on one returns), fails with an
/// issue naming the deadline and those processes, and, if it still does
/// not return ``TestWatchdog/grace`` later, ends the test process with exit
/// status 124 after printing which test it was.
///
/// swift-testing's own `.timeLimit` does not do this on Linux: it records
/// an issue at the limit but waits for a synchronous test body to return,
/// which a body blocked in `waitpid` or `read` never does.
///
/// Applied to a suite it applies to every test in it, nested suites
/// included; the innermost deadline counts (a suite or test may ask for
/// more time than its enclosing suite gives). Every root suite of the test
/// targets carries one (`Scripts/soundness.sh` checks).
///
/// When the tests run one at a time (`--no-parallel`), a test that ends
/// with a process still below the test process (a child it did not reap, or
/// that child's children) also fails, with an issue naming them; they are
/// killed and reaped, so no later test inherits them. A zombie left behind
/// would otherwise stall every later exit test for ever (see
/// ``TestWatchdog``).
///
///     @Suite(.serialized, .deadline) struct RunLoopTests {}
///     @Suite(.deadline(.seconds(600))) struct SiegeTests { ... }
public struct TestDeadline: TestTrait, SuiteTrait, TestScoping {
    /// The default deadline: several times the slowest test's time under
    /// ThreadSanitizer on a busy two-CPU machine (under 30 s), and longer
    /// than any wait a test bounds itself (at most two minutes).
    public static let standard: Duration = .seconds(300)

    /// The time each test may take.
    public let limit: Duration
    /// Tells this trait apart from another deadline with the same limit,
    /// which a test may inherit from an enclosing suite.
    private let identity: Int

    public var isRecursive: Bool { true }

    init(limit: Duration, identity: Int) {
        self.limit = limit
        self.identity = identity
    }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> TestDeadline? {
        guard !test.isSuite, testCase != nil else { return nil }
        // A test's own traits come after those it inherits: the last
        // deadline is the innermost, and the only one that watches.
        let innermost = test.traits.compactMap { $0 as? TestDeadline }.last
        return innermost?.identity == identity ? self : nil
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let name = "\(test.id)"
        let number = TestWatchdog.shared.begin(name, limit: limit)
        var thrown: (any Error)?
        do {
            try await function()
        } catch {
            thrown = error
        }
        let report = TestWatchdog.shared.end(number)
        if report.expired {
            Issue.record(
                """
                still running at its deadline (\(limit)); the watchdog killed the processes below the \
                test process so that its waits returned:
                \(ProcessTree.describe(report.processesAtDeadline))
                """,
                sourceLocation: test.sourceLocation)
        }
        if TestWatchdog.runsSerialized {
            let left = ProcessTree.descendants().filter { !$0.isSanitizerHelper && !$0.isTestRunnerCopy }
            if !left.isEmpty {
                ProcessTree.kill(left)
                let unreaped = ProcessTree.reap(left)
                Issue.record(
                    """
                    left \(left.count) process(es) running or unreaped below the test process; killed \
                    and reaped now\(unreaped.isEmpty ? "" : " (not reaped: \(unreaped))"):
                    \(ProcessTree.describe(left))
                    """,
                    sourceLocation: test.sourceLocation)
            }
        }
        if let thrown { throw thrown }
    }
}

extension Trait where Self == TestDeadline {
    /// Each test must end within ``TestDeadline/standard``.
    public static var deadline: Self { .deadline(TestDeadline.standard) }

    /// Each test must end within `limit`.
    public static func deadline(_ limit: Duration) -> Self {
        TestDeadline(limit: limit, identity: Int.random(in: .min ... .max))
    }
}
