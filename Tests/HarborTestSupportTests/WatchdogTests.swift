// Harbor — the watchdog that bounds a stuck test: what it ends, and how.
import Glibc
import HarborTestSupport
import Testing

@Suite(.serialized, .deadline) struct WatchdogTests {
    /// A wait on a child that never exits (`waitpid` with no deadline)
    /// returns at the watchdog's deadline: the child was SIGKILLed, and the
    /// report names it.
    @Test func aWaitForAChildThatNeverExitsEndsAtTheDeadline() {
        let sleeper = Child(["/bin/sleep", "600"], environment: [], captureOutput: false)
        var status: CInt = -1
        let report = TestWatchdog.shared.watch("a wait without a deadline", limit: .seconds(1)) {
            while waitpid(sleeper.pid, &status, 0) < 0 && errno == EINTR {}
        }
        #expect(report.expired)
        #expect(report.elapsed >= .seconds(1) && report.elapsed < .seconds(30), "\(report.elapsed)")
        #expect(status & 0x7f == SIGKILL, "wait status \(status)")
        #expect(report.processesAtDeadline.map(\.pid).contains(sleeper.pid))
    }

    /// A pipe read to EOF while a grandchild holds its write end (a shell's
    /// background job) ends at the deadline: the watchdog kills the child
    /// and the grandchild, the last holders, so the read sees EOF.
    @Test func aReadToEndOfFileThatAGrandchildHoldsOpenEndsAtTheDeadline() {
        let shell = Child(["/bin/sh", "-c", "/bin/sleep 600 & exec /bin/sleep 600"], environment: [])
        var read: Int = -1
        let report = TestWatchdog.shared.watch("a read held open by a grandchild", limit: .seconds(1)) {
            var byte: UInt8 = 0
            repeat { read = Glibc.read(shell.stdoutDescriptor, &byte, 1) } while read < 0 && errno == EINTR
        }
        #expect(report.expired)
        #expect(read == 0, "the read ended at EOF")
        #expect(report.processesAtDeadline.count >= 2, "the child and its grandchild: \(report.processesAtDeadline)")
        #expect(shell.exitCode() == nil, "killed, not exited: \(String(describing: shell.exitStatus))")
    }

    /// Work that ends in time is left alone.
    @Test func workThatEndsInTimeIsNotTouched() {
        let sleeper = Child(["/bin/sleep", "0.1"], environment: [], captureOutput: false)
        let report = TestWatchdog.shared.watch("a short wait", limit: .seconds(30)) {
            #expect(sleeper.exitCode() == 0)
        }
        #expect(!report.expired)
        #expect(report.processesAtDeadline.isEmpty)
    }

    /// The process tree sees a child that exited and was not reaped (a
    /// zombie), and reaps it.
    @Test func aZombieChildIsListedAndReaped() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for argument in argv { free(argument) } }
        try #require(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        var zombie: RelatedProcess?
        for _ in 0..<500 {
            zombie = ProcessTree.children().first { $0.pid == pid && $0.isZombie }
            if zombie != nil { break }
            usleep(10_000)
        }
        #expect(zombie?.name == "true")
        #expect(zombie.map { !$0.isTestRunnerCopy && !$0.isSanitizerHelper } == true)
        #expect(ProcessTree.reap(zombie.map { [$0] } ?? []).isEmpty)
        var status: CInt = 0
        #expect(waitpid(pid, &status, WNOHANG) == -1, "reaped already")
        #expect(ProcessTree.children().allSatisfy { $0.pid != pid })
    }
}
