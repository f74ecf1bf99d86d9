// Harbor — perform, stop and wake-up, nesting.
import Glibc
@testable import HarborRunLoop
import Testing

extension RunLoopTests {
    @Suite struct PerformTests {
        @Test func RL11_performFromAnotherThreadWakesTheLoop_andPerformAndWaitBlocksUntilDone() throws {
            let worker = RunLoopThread(name: "rl11")
            let log = EventLog()
            let workerThread = try {
                let id = Mutex_pid()
                try worker.performAndWait { id.set(gettid_()) }
                return id.get()
            }()
            try worker.performAndWait { log.append("ran on \(gettid_() == workerThread ? "worker" : "other")") }
            #expect(log.all == ["ran on worker"])
            // Inline on the loop's own thread.
            try worker.performAndWait {
                try? Loop.current.performAndWait { log.append("inline") }
                log.append("after inline")
            }
            #expect(log.all.suffix(2) == ["inline", "after inline"])
            worker.stop()
            #expect(throws: LoopError.self) { try worker.performAndWait {} }
        }

        @Test func RL11_commonWorkWaitsInACustomMode_unlessTheModeIsCommonOrNamed() {
            let log = onFreshThread { () -> [String] in
                let loop = Loop.current
                let log = EventLog()
                loop.add(LoopTimer(after: .seconds(100)) { _ in }, forMode: "tracking")
                loop.perform { log.append("common") }
                loop.perform(inModes: ["tracking"]) { log.append("named") }
                _ = loop.run(mode: "tracking", timeout: .milliseconds(10), returnAfterSourceHandled: false)
                log.append("--")
                loop.addCommonMode("tracking")
                _ = loop.run(mode: "tracking", timeout: .milliseconds(10), returnAfterSourceHandled: false)
                return log.all
            }
            #expect(log == ["named", "--", "common"])
        }

        @Test func RL11_delayedPerformRunsLater_andCanBeCancelled() {
            let log = onFreshThread { () -> [String] in
                let loop = Loop.current
                let log = EventLog()
                let start = ContinuousClock.now
                loop.perform(after: .milliseconds(15)) { log.append(milliseconds(since: start) >= 15 ? "late enough" : "early") }
                let cancelled = loop.perform(after: .milliseconds(5)) { log.append("cancelled ran") }
                cancelled.invalidate()
                loop.run()
                return log.all
            }
            #expect(log == ["late enough"])
        }

        @Test func RL12_stopFromAnotherThreadEndsTheRunningPass() {
            onFreshThread {
                let loop = Loop.current
                let keep = LoopSource {}
                loop.add(keep, forMode: .default)
                // The stopper waits until the loop runs: a stop sent before
                // would do nothing (CFRunLoopStop; see CFParityTests).
                let stopper = Background {
                    while loop.currentMode == nil { sched_yield() }
                    loop.stop()
                }
                let start = ContinuousClock.now
                #expect(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false) == .stopped)
                #expect(milliseconds(since: start) < 5000)
                stopper.join()
            }
        }

        @Test func RL12_wakeUpEndsASleep_andIsWaitingTellsWhetherTheLoopSleeps() {
            let worker = RunLoopThread(name: "rl12")
            let asleep = Gate()
            let woke = Gate()
            worker.loop.add(LoopObserver(activities: .beforeWaiting, repeats: false) { _ in asleep.open() }, forMode: .default)
            worker.loop.wakeUp()
            asleep.wait()
            // The observer runs just before the loop marks itself waiting and
            // sleeps: give it that instant (bounded), then it must say so.
            let deadline = ContinuousClock.now + .seconds(5)
            var sawWaiting = false
            while ContinuousClock.now < deadline {
                if worker.loop.isWaiting { sawWaiting = true; break }
                sched_yield()
            }
            #expect(sawWaiting)
            worker.loop.add(LoopObserver(activities: .afterWaiting, repeats: false) { _ in woke.open() }, forMode: .default)
            worker.loop.wakeUp()
            woke.wait()
            worker.stop()
        }

        @Test func RL13_aCalloutRunsTheLoopAgain_currentModeIsInnermost_outerResumes() {
            let log = onFreshThread { () -> [String] in
                let loop = Loop.current
                let log = EventLog()
                loop.add(LoopTimer(after: .milliseconds(2)) { _ in log.append("inner timer in \(loop.currentMode!.name)") },
                         forMode: "tracking")
                loop.add(LoopTimer(after: .milliseconds(1)) { _ in
                    log.append("outer timer in \(loop.currentMode!.name)")
                    let inner = loop.run(mode: "tracking", timeout: .seconds(5), returnAfterSourceHandled: false)
                    log.append("inner run \(inner), back in \(loop.currentMode!.name)")
                }, forMode: .default)
                loop.add(LoopTimer(after: .milliseconds(10)) { _ in log.append("outer resumed") }, forMode: .default)
                loop.run()
                return log.all
            }
            #expect(log == ["outer timer in default", "inner timer in tracking", "inner run finished, back in default",
                            "outer resumed"])
        }
    }
}

func gettid_() -> Int32 { Int32(pthread_self() & 0x7fff_ffff) }

final class Mutex_pid: @unchecked Sendable {
    // @unchecked: set once by performAndWait before get() reads it (happens-before via the completion).
    private var value: Int32 = 0
    func set(_ new: Int32) { value = new }
    func get() -> Int32 { value }
}
