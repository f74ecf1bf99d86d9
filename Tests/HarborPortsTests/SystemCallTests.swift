// Harbor — the typed system-call layer: retries, typed errors, owned descriptors.
import CHarborLinux
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts

@Suite struct SystemCallTests {
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
}
