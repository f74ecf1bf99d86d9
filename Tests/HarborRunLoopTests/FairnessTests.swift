// Harbor — fairness (RL20): bounded batches per source, many events per epoll_wait.
import CHarborLinux
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing

extension RunLoopTests {
    @Suite struct FairnessTests {
        @Test func RL20_aFloodedPortDoesNotStarveAnother() {
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    let log = EventLog()
                    let busyRight = ReceiveRight()
                    try! busyRight.setQueueLimit(1_024)
                    let busy = try! PortSource(busyRight) { _ in log.append("busy") }
                    let quiet = try! PortSource(ReceiveRight()) { _ in log.append("quiet"); Loop.current.stop() }
                    loop.add(busy, forMode: .default)
                    loop.add(quiet, forMode: .default)
                    let flood = busy.makeSendRight()
                    for index in 0..<1_000 { try! flood.send(Message(id: Int32(index))) }
                    try! quiet.makeSendRight().send(Message(id: 1))
                    #expect(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false) == .stopped)
                    // The quiet port was served within the first two batches of the busy one.
                    let served = log.all.prefix { $0 == "busy" }.count
                    #expect(log.all.contains("quiet"))
                    #expect(served <= 2 * PortSource.batchLimit, "quiet port waited for \(served) busy messages")
                    busy.invalidate()
                    quiet.invalidate()
                }
            }
        }

        /// A descriptor that is always readable gets one call per pass (it is
        /// level-triggered: each wait reports it once), so the timer and the
        /// other descriptor are served in the passes right after they become
        /// ready, not after the hot one is done (it never is).
        @Test func RL20_aBusyDescriptorDoesNotStarveAnother() {
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    // Always readable: its handler never drains it.
                    let hot = eventfd(1, charbor_EFD_CLOEXEC)
                    let pipe = TestPipe()
                    let hotCalls = Atomic(0)
                    let passes = Atomic(0)
                    let hotCallsAtWrite = Atomic(-1)
                    let hotCallsAtQuiet = Atomic(-1)
                    let busy = try! DescriptorSource(descriptor: hot, events: .readable) { _ in hotCalls.add(1, ordering: .relaxed) }
                    let quiet = try! DescriptorSource(descriptor: pipe.read, events: .readable) { _ in
                        hotCallsAtQuiet.store(hotCalls.load(ordering: .relaxed), ordering: .relaxed)
                        _ = pipe.receive()
                        Loop.current.stop()
                    }
                    loop.add(busy, forMode: .default)
                    loop.add(quiet, forMode: .default)
                    loop.add(LoopObserver(activities: .beforeTimers) { _ in passes.add(1, ordering: .relaxed) }, forMode: .default)
                    // Let the busy one spin a little, then make the quiet one ready.
                    loop.add(LoopTimer(after: .milliseconds(20)) { _ in
                        hotCallsAtWrite.store(hotCalls.load(ordering: .relaxed), ordering: .relaxed)
                        pipe.send("x")
                    }, forMode: .default)
                    // The timer fires and the quiet source is served although
                    // the hot descriptor is ready in every pass.
                    #expect(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false) == .stopped)
                    let calls = hotCalls.load(ordering: .relaxed)
                    let atWrite = hotCallsAtWrite.load(ordering: .relaxed)
                    let atQuiet = hotCallsAtQuiet.load(ordering: .relaxed)
                    // The hot descriptor was served pass after pass while the timer was pending…
                    #expect(atWrite >= 1, "the hot descriptor was not served before the timer fired")
                    // …once per pass, never a burst of calls in one pass…
                    #expect(calls <= passes.load(ordering: .relaxed), "\(calls) hot calls in \(passes.load(ordering: .relaxed)) passes")
                    // …and the quiet one was served at most two hot calls after it
                    // became ready: the rest of the timer's pass and the next one.
                    #expect(atQuiet >= atWrite && atQuiet - atWrite <= 2,
                            "the quiet descriptor waited for \(atQuiet - atWrite) hot calls after it became ready")
                    busy.invalidate()
                    quiet.invalidate()
                    close(hot)
                    close(pipe.read)
                    close(pipe.write)
                }
            }
        }

        @Test func RL20_manyReadyDescriptorsAreCollectedPerWait_notOnePerPass() {
            raiseDescriptorLimit(to: 4096)
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    let count = 1_000
                    let handled = Atomic(0)
                    let passes = Atomic(0)
                    let counters = (0..<count).map { _ in eventfd(1, charbor_EFD_CLOEXEC) }
                    let sources = counters.map { fd in
                        try! DescriptorSource(descriptor: fd, events: .readable) { _ in
                            var value: UInt64 = 0
                            _ = read(fd, &value, 8)
                            if handled.add(1, ordering: .relaxed).newValue == count { Loop.current.stop() }
                        }
                    }
                    for source in sources { loop.add(source, forMode: .default) }
                    loop.add(LoopObserver(activities: .beforeTimers) { _ in passes.add(1, ordering: .relaxed) }, forMode: .default)
                    #expect(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false) == .stopped)
                    #expect(handled.load(ordering: .relaxed) == count)
                    // 64 events per wait at first, doubling while the buffer fills:
                    // 64+128+256+512 covers 1,000 in a handful of passes, never 1,000.
                    let used = passes.load(ordering: .relaxed)
                    #expect(used <= 8, "\(used) passes for \(count) ready descriptors")
                    for source in sources { source.invalidate() }
                    for fd in counters { close(fd) }
                }
            }
        }
    }
}
