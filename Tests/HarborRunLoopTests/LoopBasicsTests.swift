// Harbor — loops per thread, modes, common modes, empty modes, the ways to run.
import HarborTestSupport
import HarborPorts
@testable import HarborRunLoop
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct LoopBasicsTests {
        @Test func RL01_currentIsPerThreadAndStable_andTornDownWhenTheThreadExits() {
            expectNoDescriptorLeak {
                let (first, second, weakLoop) = onFreshThread { () -> (ObjectIdentifier, ObjectIdentifier, Loop) in
                    (ObjectIdentifier(Loop.current), ObjectIdentifier(Loop.current), Loop.current)
                }
                #expect(first == second)
                #expect(weakLoop.isTerminated)  // its thread exited
                let distinct = onFreshThread { () -> Bool in
                    let mine = Loop.current
                    let theirs = onFreshThread { Loop.current }
                    return mine !== theirs
                }
                #expect(distinct)
            }
        }

        @Test func RL01_mainIsTheSameFromEveryThread() {
            let fromHere = Loop.main
            let fromThere = onFreshThread { Loop.main }
            #expect(fromHere === fromThere)
            #expect(fromHere.isMain)
            #expect(onFreshThread { Loop.current.isMain } == false)
        }

        @Test func RL02_defaultAlwaysExists_customModesAppearOnFirstUse_currentModeIsNilWhenIdle() {
            onFreshThread {
                let loop = Loop.current
                #expect(loop.allModes == [.default])
                #expect(loop.currentMode == nil)
                let seen = EventLog()
                loop.add(LoopTimer(after: .zero) { _ in seen.append(Loop.current.currentMode?.name ?? "nil") },
                         forMode: "tracking")
                #expect(loop.allModes.contains("tracking"))
                _ = loop.run(mode: "tracking", timeout: .seconds(5), returnAfterSourceHandled: false)
                #expect(seen.all == ["tracking"])
                #expect(loop.currentMode == nil)
            }
        }

        @Test func RL03_oneItemInSeveralModes_addTwiceIsNoOp_removeLeavesTheOthers() {
            onFreshThread {
                let loop = Loop.current
                let source = LoopSource {}
                loop.add(source, forMode: .default)
                loop.add(source, forMode: .default)
                loop.add(source, forMode: "tracking")
                #expect(loop.contains(source, inMode: .default))
                #expect(loop.contains(source, inMode: "tracking"))
                loop.remove(source, forMode: .default)
                #expect(!loop.contains(source, inMode: .default))
                #expect(loop.contains(source, inMode: "tracking"))
                // Added twice, removed once: gone, so the mode is empty again.
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: false) == .finished)
            }
        }

        @Test func RL04_commonItemsJoinEveryCommonMode_nowAndLater_andRunningCommonFinishes() {
            onFreshThread {
                let loop = Loop.current
                #expect(loop.commonModes == [.default])
                let timer = LoopTimer(after: .seconds(100)) { _ in }
                loop.add(timer, forMode: .common)
                #expect(loop.contains(timer, inMode: .default))
                #expect(!loop.contains(timer, inMode: "tracking"))
                loop.addCommonMode("tracking")
                #expect(loop.contains(timer, inMode: "tracking"))
                #expect(loop.commonModes == [.default, "tracking"])
                #expect(loop.run(mode: .common, timeout: .seconds(5), returnAfterSourceHandled: false) == .finished)
                loop.remove(timer, forMode: .common)
                #expect(!loop.contains(timer, inMode: .default) && !loop.contains(timer, inMode: "tracking"))
            }
        }

        @Test func RL05_emptyModeFinishesAtOnce_withoutTellingObservers_evenWithAPortInAnotherMode() throws {
            let port = try PortSource(ReceiveRight()) { _ in }
            let log = EventLog()
            let result = onFreshThread { () -> LoopRunResult in
                let loop = Loop.current
                loop.add(LoopObserver(activities: .all) { log.append("\($0)") }, forMode: .default)
                loop.add(port, forMode: "tracking")
                return loop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false)
            }
            #expect(result == .finished)
            #expect(log.all.isEmpty)
        }

        @Test func RL06_primitiveRunResults_finishedTimedOutHandledSourceStopped() {
            onFreshThread {
                let loop = Loop.current
                #expect(loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false) == .finished)
                let source = LoopSource {}
                loop.add(source, forMode: .default)
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: false) == .timedOut)
                source.signal()
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) == .handledSource)
                loop.perform { loop.stop() }
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: false) == .stopped)
            }
        }

        @Test func RL06_runModeBefore_returnsAfterOneSource_andFalseWhenEmpty() {
            onFreshThread {
                let loop = Loop.current
                #expect(loop.run(mode: .default, before: .now + .seconds(5)) == false)
                let ran = EventLog()
                let source = LoopSource { ran.append("source") }
                loop.add(source, forMode: .default)
                // A timer does not end runMode:beforeDate:, a source does.
                loop.add(LoopTimer(after: .milliseconds(1)) { _ in ran.append("timer"); source.signal() }, forMode: .default)
                #expect(loop.run(mode: .default, before: .now + .seconds(5)) == true)
                #expect(ran.all == ["timer", "source"])
                let start = ContinuousClock.now
                #expect(loop.run(mode: .default, before: .now + .milliseconds(30)) == true)
                #expect(milliseconds(since: start) >= 29)
            }
        }

        @Test func RL06_runAndRunUntil_andRunUntilStopped() {
            onFreshThread {
                let loop = Loop.current
                let log = EventLog()
                // run(): returns once the mode is empty (the one-shot timer left it).
                loop.add(LoopTimer(after: .milliseconds(5)) { _ in log.append("fired") }, forMode: .default)
                loop.run()
                #expect(log.all == ["fired"])
                // run(until:): returns at the deadline although a source keeps the mode alive.
                let keep = LoopSource {}
                loop.add(keep, forMode: .default)
                let start = ContinuousClock.now
                loop.run(until: .now + .milliseconds(40))
                #expect(milliseconds(since: start) >= 39)
                // runUntilStopped(): stop() ends it for good, while stop() ends only a pass of run().
                loop.perform(after: .milliseconds(5)) { loop.stop() }
                loop.runUntilStopped()
                keep.invalidate()
            }
        }

        @Test func RL16_everyCallButRunWorksFromOtherThreads() {
            let worker = LoopWorker(name: "rl16")
            let log = EventLog()
            let done = Gate()
            let threads = (0..<4).map { index in
                SystemThread.start {
                    let timer = LoopTimer(after: .milliseconds(index)) { _ in log.append("timer") }
                    worker.loop.add(timer, forMode: .default)
                    let source = LoopSource { log.append("source") }
                    worker.loop.add(source, forMode: .default)
                    source.signalAndWakeUp()
                    worker.loop.perform { log.append("block") }
                    _ = worker.loop.description
                    _ = worker.loop.isWaiting
                }
            }
            for thread in threads { thread.join() }
            worker.loop.perform(after: .milliseconds(20)) { done.open() }
            done.wait()
            #expect(log.count(of: "timer") == 4)
            #expect(log.count(of: "source") == 4)
            #expect(log.count(of: "block") == 4)
            worker.stop()
        }
    }
}
