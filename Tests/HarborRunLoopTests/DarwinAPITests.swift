// Harbor — the Darwin calls issue 14 found missing: next timer fire date, absolute fire dates,
// callouts handed their item, performing on a thread.
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct DarwinAPITests {
        @Test func RL07_nextTimerFireDateIsTheEarliestOfTheMode_nilWithoutTimers() {
            onFreshThread {
                let loop = Loop.current
                #expect(loop.nextTimerFireDate(forMode: .default) == nil)
                #expect(loop.nextTimerFireDate(forMode: .common) == nil)
                let soon = ContinuousClock.now + .milliseconds(30)
                let later = ContinuousClock.now + .seconds(30)
                let late = LoopTimer(at: later) { _ in }
                let early = LoopTimer(at: soon) { _ in }
                loop.add(late, forMode: .default)
                loop.add(early, forMode: .common)
                #expect(loop.nextTimerFireDate(forMode: .default) == soon)
                #expect(loop.nextTimerFireDate(forMode: "tracking") == nil)
                // CFRunLoopGetNextTimerFireDate's use: sleep exactly until the next timer.
                let fired = EventLog()
                early.invalidate()
                loop.add(LoopTimer(at: soon) { _ in fired.append("fired") }, forMode: .default)
                loop.run(until: loop.nextTimerFireDate(forMode: .default)! + .milliseconds(50))
                #expect(fired.all == ["fired"])
                #expect(loop.nextTimerFireDate(forMode: .default) == later)
                late.invalidate()
                #expect(loop.nextTimerFireDate(forMode: .default) == nil)
            }
        }

        @Test func RL07_absoluteFireDatesReadBackExactly_stayOnTheGrid_andNeverFireEarly() {
            let log = onFreshThread { () -> [String] in
                let loop = Loop.current
                let log = EventLog()
                let start = ContinuousClock.now + .milliseconds(20)
                let interval = Duration.milliseconds(10)
                let fires = HarborLock<[ContinuousClock.Instant]>([])
                let timer = LoopTimer(at: start, repeating: interval) { timer in
                    let now = ContinuousClock.now
                    fires.withLock { $0.append(now) }
                    if fires.withLock({ $0.count }) == 3 { timer.invalidate() }
                }
                if timer.nextFireDate != start { log.append("created at \(timer.nextFireDate), not \(start)") }
                // Moved and read back: exact.
                let moved = start + .milliseconds(5)
                timer.setNextFireDate(moved)
                if timer.nextFireDate != moved { log.append("moved to \(timer.nextFireDate), not \(moved)") }
                loop.add(timer, forMode: .default)
                loop.run()
                let times = fires.withLock { $0 }
                for (k, time) in times.enumerated() where time < moved + interval * k {
                    log.append("fire \(k) early by \(moved + interval * k - time)")
                }
                // The last fire date read back is on the grid the move started
                // (past the third fire when a late pass skipped a period: a
                // loaded machine, or a sanitizer build).
                if !(2...1_000).contains(where: { timer.nextFireDate == moved + interval * $0 }) {
                    log.append("off the grid: \(timer.nextFireDate)")
                }
                log.append("fired \(times.count)")
                // A Duration-made timer reads the same absolute date twice.
                let relative = LoopTimer(after: .seconds(1)) { _ in }
                let first = relative.nextFireDate
                if relative.nextFireDate != first { log.append("unstable reading") }
                return log.all
            }
            #expect(log == ["fired 3"])
        }

        @Test func RL07_movingAnAbsoluteDateFromAnotherThreadReArmsTheSleepingLoop() {
            let worker = LoopWorker(name: "rl07-move")
            let fired = Gate()
            let when = HarborLock<ContinuousClock.Instant?>(nil)
            let timer = LoopTimer(at: .now + .seconds(60)) { _ in
                when.withLock { $0 = .now }
                fired.open()
            }
            worker.loop.add(timer, forMode: .default)
            let target = ContinuousClock.now + .milliseconds(30)
            timer.setNextFireDate(target)
            fired.wait()
            let firedAt = when.withLock { $0 }!
            #expect(firedAt >= target)
            #expect(firedAt < target + .seconds(5))
            worker.stop()
        }

        @Test func RL08_RL09_RL10_RL18_calloutsAreHandedTheirItem_andCanInvalidateItWithoutABox() {
            expectNoDescriptorLeak {
                let log = onFreshThread { () -> [String] in
                    let loop = Loop.current
                    let log = EventLog()
                    loop.add(LoopObserver(activities: .beforeSources, order: 7) { observer, activity in
                        log.append("observer \(observer.order) \(activity)")
                        observer.invalidate()
                    }, forMode: .default)
                    let source = LoopSource(order: 3) { source in
                        log.append("source \(source.order)")
                        source.invalidate()
                    }
                    loop.add(source, forMode: .default)
                    source.signal()
                    let port = try! PortSource(ReceiveRight(), order: 1) { port, message in
                        log.append("port \(port.order) message \(message.id)")
                        port.invalidate()  // the second message is never handled
                    }
                    loop.add(port, forMode: .default)
                    let send = port.makeSendRight()
                    try! send.send(Message(id: 1))
                    try! send.send(Message(id: 2))
                    var ends: [CInt] = [0, 0]
                    _ = pipe(&ends)
                    let descriptor = try! DescriptorSource(descriptor: ends[1], events: .writable, order: 2) { source, events in
                        log.append("descriptor \(source.order) \(events.contains(.writable))")
                        source.invalidate()
                    }
                    loop.add(descriptor, forMode: .default)
                    loop.add(LoopTimer(after: .zero) { timer in
                        log.append("timer valid \(timer.isValid)")
                    }, forMode: .default)
                    // Everything invalidated itself: the mode empties and the run finishes.
                    log.append("\(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: false))")
                    close(ends[0])
                    close(ends[1])
                    return log.all
                }
                // The timer fires in the first pass or the next (as soon as
                // its timerfd reads ready): only its presence is checked.
                #expect(log.filter { $0 != "timer valid true" } == [
                    "observer 7 beforeSources", "source 3", "port 1 message 1", "descriptor 2 true", "finished",
                ])
                #expect(log.contains("timer valid true"))
            }
        }

        @Test func RL11_performOnAThreadBeforeItStarts_aPendingPerformKeepsItsLoopAlive() {
            expectNoDescriptorLeak {
                let log = EventLog()
                // Without work, a thread whose body only runs its loop returns at once.
                let idle = LoopThread(name: "idle") { log.append("idle run: \(Loop.current.run(mode: .default, before: nil))") }
                idle.start()
                idle.join()
                // A perform posted before the thread started keeps its loop alive until it ran.
                let thread = LoopThread(name: "target") {
                    log.append("body starts")
                    log.append("run: \(Loop.current.run(mode: .default, before: nil))")
                    log.append("then: \(Loop.current.run(mode: .default, before: nil))")
                }
                #expect(!thread.isExecuting && !thread.isFinished)
                thread.perform {
                    log.append("performed on its own loop: \(Loop.current === thread.loop)")
                }
                thread.start()
                thread.join()
                #expect(thread.isFinished)
                #expect(log.all == ["idle run: false", "body starts", "performed on its own loop: true", "run: true", "then: false"])
            }
        }

        @Test func RL11_performAndWaitOnAThreadWaitsForItToRun_andThrowsOnceItEnded() throws {
            let ready = Gate()
            let thread = LoopThread(name: "waited") {
                let keep = LoopSource {}
                Loop.current.add(keep, forMode: .default)
                ready.open()
                Loop.current.runUntilStopped()
            }
            let started = SystemThread.start { thread.start() }
            let ranOn = HarborLock<Loop?>(nil)
            try thread.performAndWait { ranOn.withLock { $0 = Loop.current } }
            #expect(ranOn.withLock { $0 } === thread.loop)
            ready.wait()
            started.join()
            try thread.performAndWait { Loop.current.stop() }
            thread.join()
            #expect(throws: LoopError.self) { try thread.performAndWait {} }
        }
    }
}
