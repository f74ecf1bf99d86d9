// Harbor — tests that hang on purpose, to show a stuck test fails the run by
// its own deadline. Off unless HARBOR_TEST_HANG names one:
//
//   HARBOR_TEST_HANG=wait    a wait for a child that never exits
//   HARBOR_TEST_HANG=zombie  a zombie left behind, then an exit test (the CI hang)
//   HARBOR_TEST_HANG=stuck   a wait no child can end (the process ends, exit 124)
//
//   HARBOR_TEST_HANG=wait swift test --skip-build --no-parallel --filter HangOnPurpose
import Glibc
import HarborTestSupport
import Testing

/// The hang HARBOR_TEST_HANG asks for, if any.
private let hang = getenv("HARBOR_TEST_HANG").map { String(cString: $0) }

@Suite(.serialized, .deadline(.seconds(5))) struct HangOnPurposeTests {
    /// Fails at its 5 s deadline: the watchdog kills the child it waits for.
    @Test(.enabled(if: hang == "wait", "HARBOR_TEST_HANG=wait"))
    func waitsForAChildThatNeverExits() {
        let sleeper = Child(["/bin/sleep", "600"], environment: [], captureOutput: false)
        var status: CInt = 0
        while waitpid(sleeper.pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// The CI hang: a child exited and was never reaped (a zombie), then an
    /// exit test runs. swift-testing's exit-test monitor reports the zombie
    /// for ever and never sees the exit test's child; at the 5 s deadline
    /// the watchdog reaps the zombie, the exit test completes, and the test
    /// fails by its deadline.
    @Test(.enabled(if: hang == "zombie", "HARBOR_TEST_HANG=zombie"))
    func leavesAZombieThenRunsAnExitTest() async {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for argument in argv { free(argument) } }
        _ = posix_spawn(&pid, "/bin/true", nil, nil, argv, environ)
        usleep(200_000)
        await #expect(processExitsWith: .failure) {
            exit(EXIT_FAILURE)
        }
    }

    /// Stuck where no child can help: the watchdog ends the test process
    /// 60 s after the deadline, naming this test.
    @Test(.enabled(if: hang == "stuck", "HARBOR_TEST_HANG=stuck"))
    func waitsForSomethingNoChildCanEnd() {
        var set = sigset_t()
        sigemptyset(&set)
        while true { sigsuspend(&set) }
    }
}
