// Harbor — timers: never early, on the grid, skipped ticks, tolerance, one-shot, modes.
@testable import HarborRunLoop
import HarborPorts
import HarborTestSupport
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct TimerTests {
        @Test func RL07_neverFiresBeforeItsFireDate() {
            onFreshThread {
                let loop = Loop.current
                let start = ContinuousClock.now
                let early = EventLog()
                let fired = EventLog()
                for delay in [3, 7, 12, 20] {
                    loop.add(LoopTimer(after: .milliseconds(delay)) { _ in
                        if milliseconds(since: start) < Double(delay) { early.append("early \(delay)") }
                        fired.append("\(delay)")
                    }, forMode: .default)
                }
                loop.run()
                #expect(early.all.isEmpty)
                // Not early because not at all would prove nothing: each fired, in date order.
                #expect(fired.all == ["3", "7", "12", "20"])
            }
        }

        /// The grid is checked on the dates the timer schedules, exactly,
        /// not on how late a loaded machine woke the thread for them (a
        /// wall-clock tolerance for that was what failed under load).
        @Test func RL07_repeatingTimerStaysOnItsGrid_andSkipsMissedTicks() {
            onFreshThread {
                let loop = Loop.current
                let interval = Duration.milliseconds(40)
                // Each fire: when its callout ran, and the next fire date the timer gave there.
                let fires = HarborLock<[(at: ContinuousClock.Instant, next: ContinuousClock.Instant)]>([])
                let timer = LoopTimer(after: interval, repeating: interval) { timer in
                    let now = ContinuousClock.now
                    let count = fires.withLock { fires -> Int in
                        fires.append((now, timer.nextFireDate))
                        return fires.count
                    }
                    if count == 1 {
                        // Busy for 3.5 ticks: the missed ticks must be skipped, not fired in a burst after.
                        let busy = ContinuousClock.now
                        while ContinuousClock.now - busy < .milliseconds(140) {}
                    }
                    if count == 4 { timer.invalidate() }
                }
                let first = timer.nextFireDate
                loop.add(timer, forMode: .default)
                loop.run()
                let seen = fires.withLock { $0 }
                #expect(seen.count == 4)
                guard seen.count == 4 else { return }
                // Every date the timer schedules is first + k·40 ms, exactly, and later than the one before.
                for (index, fire) in seen.enumerated() {
                    let steps = Int(((fire.next - first) / interval).rounded())
                    #expect(fire.next == first + interval * steps && steps > index,
                            "fire \(index) scheduled the next at \(fire.next - first) after the first date")
                }
                // Never early: each fire comes at or after the date scheduled before it.
                #expect(seen[0].at >= first)
                for (earlier, later) in zip(seen, seen.dropFirst()) {
                    #expect(later.at >= earlier.next, "fired \(earlier.next - later.at) before its date")
                }
                // The ticks missed while busy (80, 120, 160 ms) were skipped, not fired late in a burst:
                // the next fire is at the first grid point after the busy callout ended.
                #expect(seen[1].at >= first + .milliseconds(160), "fired \(seen[1].at - first) after the first date")
            }
        }

        @Test func RL07_toleranceCoalescesTwoTimersIntoOneWakeUp() {
            func wakeUps(tolerance: Duration) -> (Int, [String]) {
                onFreshThread {
                    let loop = Loop.current
                    let log = EventLog()
                    loop.add(LoopObserver(activities: .afterWaiting) { _ in log.append("wake") }, forMode: .default)
                    loop.add(LoopTimer(after: .milliseconds(20), tolerance: tolerance) { _ in log.append("A") }, forMode: .default)
                    loop.add(LoopTimer(after: .milliseconds(60)) { _ in log.append("B") }, forMode: .default)
                    loop.run()
                    return (log.count(of: "wake"), log.all)
                }
            }
            let (strict, strictLog) = wakeUps(tolerance: .zero)
            let (lenient, lenientLog) = wakeUps(tolerance: .milliseconds(100))
            #expect(strict == 2, "\(strictLog)")
            #expect(lenient == 1, "\(lenientLog)")
            #expect(lenientLog == ["wake", "A", "B"])
        }

        /// CF arms a lone timer at its fire date and lets the kernel use
        /// the tolerance as leeway, so a lone timer is on time; tolerance
        /// only lets a timer wait for another one to share its wake-up. A
        /// tolerance far beyond any scheduling delay tells the two apart.
        @Test func RL07_toleranceNeverMakesALoneTimerLate() {
            let lateness = onFreshThread { () -> [Duration] in
                let loop = Loop.current
                let late = HarborLock<[Duration]>([])
                for tolerance in [Duration.milliseconds(5), .seconds(2)] {
                    let due = ContinuousClock.now + .milliseconds(20)
                    let timer = LoopTimer(at: due, tolerance: tolerance) { _ in
                        late.withLock { $0.append(ContinuousClock.now - due) }
                    }
                    loop.add(timer, forMode: .default)
                    loop.run()
                }
                return late.withLock { $0 }
            }
            #expect(lateness.count == 2)
            // On time but for scheduling delay: not a second of its two.
            #expect(lateness.allSatisfy { $0 >= .zero && $0 < .seconds(1) }, "fired \(lateness) after its date")
        }

        @Test func RL07_idleLoopWithAThousandFarTimersSleepsInOneWait() {
            expectNoDescriptorLeak {
                let (result, wakes) = onFreshThread { () -> (LoopRunResult, Int) in
                    let loop = Loop.current
                    let log = EventLog()
                    loop.add(LoopObserver(activities: .afterWaiting) { _ in log.append("wake") }, forMode: .default)
                    for index in 0..<1000 {
                        loop.add(LoopTimer(after: .seconds(60 + index), repeating: .seconds(1)) { _ in }, forMode: .default)
                    }
                    let result = loop.run(mode: .default, timeout: .milliseconds(50), returnAfterSourceHandled: false)
                    return (result, log.count(of: "wake"))
                }
                #expect(result == .timedOut)
                #expect(wakes == 1)  // one sleep, ended by the timeout: no periodic wake-ups
            }
        }

        @Test func RL07_oneShotTimerLeavesEveryMode_andEmptiesTheRun() {
            onFreshThread {
                let loop = Loop.current
                let timer = LoopTimer(after: .milliseconds(2)) { _ in }
                loop.add(timer, forMode: .default)
                loop.add(timer, forMode: "tracking")
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) == .finished)
                #expect(!timer.isValid)
                #expect(!loop.contains(timer, inMode: "tracking"))
            }
        }

        @Test func RL07_firesOnlyInItsModes_commonTimerFiresInEachCommonMode() {
            onFreshThread {
                let loop = Loop.current
                let log = EventLog()
                loop.addCommonMode("tracking")
                let keep = LoopSource {}
                loop.add(keep, forMode: "other")
                loop.add(LoopTimer(after: .milliseconds(1), repeating: .milliseconds(5)) { _ in
                    log.append(Loop.current.currentMode!.name)
                }, forMode: .common)
                _ = loop.run(mode: "other", timeout: .milliseconds(30), returnAfterSourceHandled: false)
                #expect(log.all.isEmpty)
                _ = loop.run(mode: "tracking", timeout: .milliseconds(30), returnAfterSourceHandled: false)
                _ = loop.run(mode: .default, timeout: .milliseconds(30), returnAfterSourceHandled: false)
                #expect(log.count(of: "tracking") >= 2)
                #expect(log.count(of: "default") >= 2)
            }
        }

        @Test func RL07_invalidateAndSetFireDateFromAnotherThreadReachTheSleepingLoop() {
            let worker = LoopWorker(name: "rl07")
            let log = EventLog()
            let fired = Gate()
            let late = LoopTimer(after: .seconds(3600)) { _ in log.append("late"); fired.open() }
            let doomed = LoopTimer(after: .milliseconds(30)) { _ in log.append("doomed") }
            worker.loop.add(late, forMode: .default)
            worker.loop.add(doomed, forMode: .default)
            doomed.invalidate()
            let start = ContinuousClock.now
            late.setFireDate(after: .milliseconds(50))  // re-arms the sleeping loop's timerfd
            fired.wait()
            #expect(milliseconds(since: start) < 3000)
            #expect(log.all == ["late"])
            // The gate opens inside the callout; the one-shot timer is
            // invalidated just after it (as CF does). A block runs after the
            // timer pass, so waiting for one orders the check after it.
            #expect(throws: Never.self) { try worker.loop.performAndWait {} }
            #expect(!late.isValid)
            worker.stop()
        }

        @Test func RL07_firingATimerIsNotHandlingASource() {
            onFreshThread {
                let loop = Loop.current
                let fires = EventLog()
                loop.add(LoopTimer(after: .milliseconds(1), repeating: .milliseconds(2)) { _ in fires.append("fired") },
                         forMode: .default)
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: true) == .timedOut)
                // The run went on past fires of the timer: they did not end it.
                #expect(fires.all.count >= 1)
            }
        }
    }
}
