// Harbor — perform, stop and wake-up, nesting.
import Dispatch
import Glibc
@testable import HarborRunLoop
import HarborPorts
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct PerformTests {
        /// The block runs on the loop's own thread — told by the kernel
        /// thread id the loop recorded on that thread when it was made, not by
        /// asking from inside a perform — never inline on the caller; a
        /// sleeping loop is woken for it; performAndWait returns only after
        /// the block finished.
        @Test func RL11_performFromAnotherThreadWakesTheLoop_andPerformAndWaitBlocksUntilDone() throws {
            try expectNoDescriptorLeak {
                let worker = LoopWorker(name: "rl11")
                let caller = SystemThread.kernelID
                // The loop records its thread's kernel id on that thread, when it is made.
                let loopThread = worker.loop.threadID
                #expect(loopThread != 0 && loopThread != caller, "loop thread \(loopThread), caller \(caller)")
                // Asleep with nothing to do (its keep-alive source is never
                // signalled): only a wake-up can make it run a block now.
                let deadline = ContinuousClock.now + .seconds(10)
                while !worker.loop.isWaiting && ContinuousClock.now < deadline { sched_yield() }
                #expect(worker.loop.isWaiting)
                let ran = DispatchSemaphore(value: 0)
                let ranOn = Atomic<pid_t>(0)
                worker.perform {
                    ranOn.store(SystemThread.kernelID, ordering: .relaxed)
                    ran.signal()
                }
                #expect(ran.wait(timeout: .now() + 10) == .success, "the sleeping loop was not woken for the block")
                let performedOn = ranOn.load(ordering: .relaxed)
                #expect(performedOn == loopThread, "perform ran on \(performedOn), caller \(caller), loop \(loopThread)")
                // performAndWait: the caller is held until the block is done,
                // and the block is not run inline on the caller.
                let finished = Atomic(false)
                let waitedOn = Atomic<pid_t>(0)
                try worker.performAndWait {
                    waitedOn.store(SystemThread.kernelID, ordering: .relaxed)
                    usleep(20_000)  // a window in which a caller not held would look
                    finished.store(true, ordering: .releasing)
                }
                let returnedAfterTheBlock = finished.load(ordering: .acquiring)
                #expect(returnedAfterTheBlock, "performAndWait returned before its block finished")
                let waitedFor = waitedOn.load(ordering: .relaxed)
                #expect(waitedFor == loopThread, "performAndWait ran on \(waitedFor), caller \(caller), loop \(loopThread)")
                // On the loop's own thread performAndWait runs inline, at once.
                let log = EventLog()
                try worker.performAndWait {
                    try? Loop.current.performAndWait { log.append("inline on \(SystemThread.kernelID == loopThread ? "loop" : "other")") }
                    log.append("after inline")
                }
                #expect(log.all == ["inline on loop", "after inline"])
                worker.stop()
                #expect(throws: LoopError.self) { try worker.performAndWait {} }
            }
        }

        @Test func RL11_commonWorkWaitsInACustomMode_unlessTheModeIsCommonOrNamed() {
            expectNoDescriptorLeak {
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
        }

        @Test func RL11_delayedPerformRunsLater_andCanBeCancelled() {
            expectNoDescriptorLeak {
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
        }

        @Test func RL12_stopFromAnotherThreadEndsTheRunningPass() {
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    let keep = LoopSource {}
                    loop.add(keep, forMode: .default)
                    // The stopper waits until the loop runs: a stop sent before
                    // would do nothing (CFRunLoopStop; see CFParityTests).
                    let stopper = SystemThread.start {
                        while loop.currentMode == nil { sched_yield() }
                        loop.stop()
                    }
                    let start = ContinuousClock.now
                    #expect(loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false) == .stopped)
                    #expect(milliseconds(since: start) < 5000)
                    stopper.join()
                }
            }
        }

        @Test func RL12_wakeUpEndsASleep_andIsWaitingTellsWhetherTheLoopSleeps() {
            expectNoDescriptorLeak {
                let worker = LoopWorker(name: "rl12")
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
        }

        @Test func RL13_aCalloutRunsTheLoopAgain_currentModeIsInnermost_outerResumes() {
            expectNoDescriptorLeak {
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
}
