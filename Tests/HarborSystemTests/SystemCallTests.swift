// Harbor — the typed system-call layer: retries, typed errors, owned descriptors.
import CHarborLinux
import Glibc
import HarborTestSupport
import HarborSystem
import Testing

@Suite(.deadline) struct SystemCallTests {
    @Test func systemCall_retriesInterruptedCalls() throws {
        try expectNoDescriptorLeak { () throws in
            var attempts = 0
            let result = try systemCall("fake") { () -> CInt in
                attempts += 1
                if attempts < 3 { charbor_set_errno(EINTR); return -1 }
                return 42
            }
            #expect(result == 42)
            #expect(attempts == 3)
        }
    }

    @Test func systemCall_throwsTheErrnoWithTheCallName() {
        expectNoDescriptorLeak {
            do throws(SystemError) {
                _ = try systemCall("close") { Glibc.close(-1) }
                Issue.record("close(-1) must fail")
            } catch {
                #expect(error.code == EBADF)
                #expect(error.call == "close")
                #expect(error.description.hasPrefix("close: "))
            }
        }
    }

    @Test func systemCallOrWouldBlock_returnsNilForEAGAIN() throws {
        try expectNoDescriptorLeak { () throws in
            let counter = try EventDescriptor()
            var value: UInt64 = 0
            let result = try systemCallOrWouldBlock("read") { Glibc.read(counter.rawValue, &value, 8) }
            #expect(result == nil)
        }
    }

    @Test func ownedDescriptor_closesExactlyOnceOrIsRelinquished() throws {
        try expectNoDescriptorLeak {
            let before = openDescriptorCount()
            do { _ = try EventDescriptor() }
            #expect(openDescriptorCount() == before)
            let owned = OwnedDescriptor(taking: try systemCall("eventfd") { eventfd(0, 0) })
            let raw = owned.relinquish()
            #expect(fcntl(raw, F_GETFD) >= 0, "relinquish must not close")
            Glibc.close(raw)
        }
    }

    @Test func eventCounter_isReadableUntilDrained() throws {
        try expectNoDescriptorLeak { () throws in
            let counter = try EventDescriptor()
            #expect(!isReadable(counter.rawValue))
            counter.signal()
            counter.signal()
            #expect(isReadable(counter.rawValue))
            #expect(counter.drain() == 2)
            #expect(!isReadable(counter.rawValue))
            #expect(counter.drain() == 0)
        }
    }

    @Test func timerDescriptor_becomesReadableAtItsDeadline() throws {
        try expectNoDescriptorLeak { () throws in
            let timer = try TimerDescriptor()
            try timer.arm(at: MonotonicInstant.now.adding(.milliseconds(20)))
            #expect(!isReadable(timer.rawValue))
            #expect(try waitUntilReadable(timer.rawValue, deadline: WaitDeadline(timeout: .seconds(5))))
            #expect(timer.drain() == 1)
            try timer.disarm()
        }
    }

    /// A child gets stdin, stdout, stderr and the descriptor passed to it,
    /// and nothing else: not even a descriptor of this process opened
    /// without close-on-exec (as a test runner's output pipe may be).
    @Test func processControl_aChildInheritsOnlyStdioAndWhatItIsGiven() throws {
        try expectNoDescriptorLeak { () throws in
            // Numbered above 3 (the given one's number in the child), and
            // without close-on-exec (F_DUPFD): exec alone would not close it.
            let opened = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            let stray = fcntl(opened, F_DUPFD, 10)
            Glibc.close(opened)
            try #require(stray >= 10 && fcntl(stray, F_GETFD) == 0)
            defer { Glibc.close(stray) }
            let given = try EventDescriptor()
            // Exit codes: 3, the given one is missing; 4, the stray one came
            // along; 5, stderr is missing.
            let script = "test -e /proc/self/fd/3 || exit 3; test -e /proc/self/fd/\(stray) && exit 4; "
                + "test -e /proc/self/fd/2 || exit 5; exit 0"
            let pid = try ProcessControl.spawn("/bin/sh", arguments: ["sh", "-c", script], environment: [],
                                               inherit: (given.rawValue, 3))
            let status = ProcessControl.waitForExit(pid)
            #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 0,
                    "the child exited with \((status >> 8) & 0xff) (4: descriptor \(stray) was inherited)")
        }
    }

    /// A descriptor named in `keeping` reaches the child under its own
    /// number, beside the given one, while a stray one still does not; a
    /// given descriptor that already has its target number reaches the child
    /// too (dup2 onto itself would keep close-on-exec).
    @Test func processControl_aChildKeepsTheDescriptorsItIsToldToKeep() throws {
        try expectNoDescriptorLeak { () throws in
            let opened = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            let kept = fcntl(opened, F_DUPFD, 10)
            let stray = fcntl(opened, F_DUPFD, 20)
            Glibc.close(opened)
            try #require(kept >= 10 && stray > kept && fcntl(kept, F_GETFD) == 0)
            defer { Glibc.close(kept); Glibc.close(stray) }
            let given = try EventDescriptor()
            // Exit codes: 3, the given one is missing; 4, the stray one came
            // along; 6, the kept one is missing.
            let script = "test -e /proc/self/fd/\(given.rawValue) || exit 3; test -e /proc/self/fd/\(stray) && exit 4; "
                + "test -e /proc/self/fd/\(kept) || exit 6; exit 0"
            let pid = try ProcessControl.spawn("/bin/sh", arguments: ["sh", "-c", script], environment: [],
                                               inherit: (given.rawValue, given.rawValue), keeping: [kept])
            let status = ProcessControl.waitForExit(pid)
            #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 0, "the child exited with \((status >> 8) & 0xff)")
            #expect(fcntl(given.rawValue, F_GETFD) & FD_CLOEXEC != 0, "this process's copy keeps close-on-exec")
        }
    }
}
