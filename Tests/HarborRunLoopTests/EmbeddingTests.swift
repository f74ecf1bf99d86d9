// Harbor — embedding (RL21): a plain poll loop drives a Harbor loop; a Harbor loop drives a foreign one.
import CHarborLinux
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct EmbeddingTests {
        @Test func RL21_aPlainPollLoopDrivesAHarborLoop() {
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    let log = EventLog()
                    let port = try! PortSource(ReceiveRight()) { message in log.append("message \(message.id)") }
                    loop.add(port, forMode: .default)
                    loop.add(LoopTimer(after: .milliseconds(30)) { _ in log.append("timer") }, forMode: .default)
                    let sender = port.makeSendRight()
                    guard let fd = loop.foreignWaitDescriptor(in: .default) else {
                        Issue.record("no descriptor")
                        return
                    }
                    // Work posted from another thread must reach the host's sleep too.
                    let poster = SystemThread.start {
                        try? sender.send(Message(id: 7))
                        loop.perform { log.append("performed") }
                    }
                    var sleeps = 0
                    var passes = 0
                    let deadline = ContinuousClock.now + .seconds(10)
                    // The host: a hand-written poll loop, knowing nothing of Harbor but one fd.
                    while log.all.count < 3 && ContinuousClock.now < deadline {
                        let mayWait = loop.prepareForForeignWait(in: .default)
                        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                        if mayWait { sleeps += 1 }
                        _ = poll(&entry, 1, mayWait ? 5_000 : 0)
                        loop.runReady(in: .default)
                        passes += 1
                    }
                    poster.join()
                    #expect(Set(log.all) == ["message 7", "performed", "timer"])
                    // Slept in poll between events, never spun: a handful of passes.
                    #expect(sleeps >= 1)
                    #expect(passes < 50, "\(passes) passes")
                    port.invalidate()
                    // An empty mode: runReady says finished and does not block.
                    #expect(loop.runReady(in: .default) == .finished)
                }
            }
        }

        @Test func RL21_aHarborLoopDrivesAForeignLoop() {
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    // The foreign loop: its own epoll set watching its own eventfd,
                    // with a "dispatch what is ready" call, like sd-event or GLib.
                    let foreign = epoll_create1(charbor_EPOLL_CLOEXEC)
                    let work = eventfd(0, charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)
                    var registration = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 1))
                    epoll_ctl(foreign, EPOLL_CTL_ADD, work, &registration)
                    let log = EventLog()
                    let dispatchForeign: @Sendable () -> Void = {
                        var event = epoll_event()
                        while epoll_wait(foreign, &event, 1, 0) == 1 {
                            var value: UInt64 = 0
                            _ = read(work, &value, 8)
                            log.append("foreign event \(value) on loop thread \(Loop.current === loop)")
                        }
                    }
                    // Harbor watches the foreign loop's one descriptor.
                    let bridge = try! DescriptorSource(descriptor: foreign, events: .readable) { _ in dispatchForeign() }
                    loop.add(bridge, forMode: .default)
                    let writer = SystemThread.start {
                        var value: UInt64 = 5
                        _ = write(work, &value, 8)
                    }
                    #expect(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true) == .handledSource)
                    writer.join()
                    #expect(log.all == ["foreign event 5 on loop thread true"])
                    bridge.invalidate()
                    close(work)
                    close(foreign)
                }
            }
        }
    }
}
