// HarborFoundation — NSRunLoop and NSTimer code, ported by renaming, behaves as on Darwin.
import Foundation
import HarborFoundation
import HarborPorts
import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

/// Serialized, so the descriptor checks of one test see no other test's threads.
@Suite(.serialized, .deadline) struct FoundationFormsTests {
    /// Runs `body` on a fresh thread (HarborTestSupport's `onFreshThread`:
    /// its loop is torn down when it exits) and checks no descriptor outlives it.
    private func onFreshThreadLeavingNoDescriptor<Result>(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping () -> Result
    ) -> Result {
        expectNoDescriptorLeak(sourceLocation: sourceLocation) { onFreshThread(body) }
    }

    @Test func RL06_runModeBeforeDate_andRunUntilDate_asNSRunLoop() {
        let log = onFreshThreadLeavingNoDescriptor { () -> [String] in
            var log: [String] = []
            let loop = Loop.current
            // Nothing to run: NO at once.
            log.append("empty: \(loop.run(mode: .default, before: .distantFuture))")
            // A one-shot timer empties the mode as it fires: still YES.
            loop.add(LoopTimer(timeInterval: 0.005, repeats: false) { _ in }, forMode: .default)
            log.append("timer: \(loop.run(mode: .default, before: .distantFuture))")
            log.append("after: \(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 1)))")
            // runUntilDate: returns at the date although a source keeps the mode alive.
            let keep = LoopSource {}
            loop.add(keep, forMode: .default)
            let start = Date()
            loop.run(until: Date(timeIntervalSinceNow: 0.05))
            let waited = Date().timeIntervalSince(start)
            if waited < 0.049 || waited > 5 { log.append("runUntilDate waited \(waited)") }
            // acceptInputForMode:beforeDate: returns after a handled source.
            keep.signal()
            loop.acceptInput(forMode: .default, before: .distantFuture)
            log.append("handled: \(!keep.isSignalled)")
            keep.invalidate()
            return log
        }
        #expect(log == ["empty: false", "timer: true", "after: false", "handled: true"])
    }

    @Test func RL06_RL07_limitDateForMode_pollsThenTellsTheNextTimer() {
        let log = onFreshThreadLeavingNoDescriptor { () -> [String] in
            var log: [String] = []
            let loop = Loop.current
            log.append("empty: \(String(describing: loop.limitDate(forMode: .default)))")
            let keep = LoopSource {}
            loop.add(keep, forMode: .default)
            log.append("no timer: \(loop.limitDate(forMode: .default) == .distantFuture)")
            let date = Date(timeIntervalSinceNow: 30)
            let timer = LoopTimer(fire: date, interval: 0, repeats: false) { _ in }
            loop.add(timer, forMode: .default)
            log.append("timer: \(loop.limitDate(forMode: .default) == date)")
            // A due timer fires in limitDate's poll.
            let fired = HarborLock(false)
            loop.add(LoopTimer(fire: .distantPast, interval: 0, repeats: false) { _ in fired.withLock { $0 = true } },
                     forMode: .default)
            _ = loop.limitDate(forMode: .default)
            log.append("due fired: \(fired.withLock { $0 })")
            timer.invalidate()
            keep.invalidate()
            return log
        }
        #expect(log == ["empty: nil", "no timer: true", "timer: true", "due fired: true"])
    }

    @Test func RL07_nsTimerForms_fireDateReadBackExactly_intervalToleranceAndFire() {
        let log = onFreshThreadLeavingNoDescriptor { () -> [String] in
            var log: [String] = []
            let loop = Loop.current
            // timerWithTimeInterval: the first fire is one interval away.
            let start = Date()
            let fireTimes = HarborLock<[Date]>([])
            let ticker = LoopTimer(timeInterval: 0.01, repeats: true) { timer in
                let count = fireTimes.withLock { $0.append(Date()); return $0.count }
                if count == 3 { timer.invalidate() }
            }
            log.append("interval \(ticker.timeInterval)")
            ticker.tolerance = 0.002
            let tolerance: TimeInterval = ticker.tolerance
            log.append("tolerance \(tolerance)")
            loop.add(ticker, forMode: .common)
            loop.run(until: Date(timeIntervalSinceNow: 5))
            let times = fireTimes.withLock { $0 }
            log.append("fired \(times.count)")
            if let first = times.first, first.timeIntervalSince(start) < 0.0099 { log.append("first fire early") }
            // fireDate: set, read back as set; moving it reschedules.
            let oneShot = LoopTimer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
            let target = Date(timeIntervalSinceNow: 100)
            oneShot.fireDate = target
            log.append("read back \(oneShot.fireDate == target)")
            log.append("one-shot interval \(oneShot.timeInterval)")
            // fire(): the handler now; a one-shot timer is then invalid.
            let fired = HarborLock(0)
            let manual = LoopTimer(timeInterval: 60, repeats: false) { _ in fired.withLock { $0 += 1 } }
            manual.fire()
            manual.fire()
            log.append("fire() ran \(fired.withLock { $0 }), valid \(manual.isValid)")
            return log
        }
        #expect(log == ["interval 0.01", "tolerance 0.002", "fired 3", "read back true", "one-shot interval 0.0",
                        "fire() ran 1, valid false"])
    }

    @Test func RL07_aRepeatingTimerFromADateStaysOnItsGrid() {
        let dates = onFreshThreadLeavingNoDescriptor { () -> [TimeInterval] in
            let loop = Loop.current
            let first = Date(timeIntervalSinceNow: 0.02)
            let offsets = HarborLock<[TimeInterval]>([])
            let timer = LoopTimer(fire: first, interval: 0.01, repeats: true) { timer in
                // Each fire date read inside the callout is already the next grid point.
                let count = offsets.withLock { $0.append(timer.fireDate.timeIntervalSince(first)); return $0.count }
                if count == 3 { timer.invalidate() }
            }
            loop.add(timer, forMode: .default)
            loop.run()
            return offsets.withLock { $0 }
        }
        #expect(dates.count == 3)
        // On the grid first + k·0.01 (to a Double's precision), never off by a clock reading.
        for (index, offset) in dates.enumerated() {
            let steps = (offset / 0.01).rounded()
            #expect(steps >= Double(index + 1))
            #expect(abs(offset - steps * 0.01) < 1e-6, "offset \(offset)")
        }
    }

    @Test func RL07_scheduledTimerGoesToTheCurrentLoopsDefaultMode() {
        let log = onFreshThreadLeavingNoDescriptor { () -> [String] in
            let log = HarborLock<[String]>([])
            let timer = LoopTimer.scheduledTimer(withTimeInterval: 0.005, repeats: false) { _ in
                log.withLock { $0.append("fired in \(Loop.current.currentMode?.name ?? "none")") }
            }
            log.withLock { $0.append("in default \(Loop.current.contains(timer, inMode: .default))") }
            Loop.current.run()
            return log.withLock { $0 }
        }
        #expect(log == ["in default true", "fired in default"])
    }

    @Test func RL11_performAfterATimeInterval_andItsCancellation() {
        let log = onFreshThreadLeavingNoDescriptor { () -> [String] in
            let log = HarborLock<[String]>([])
            let loop = Loop.current
            let start = Date()
            loop.perform(after: 0.02) { log.withLock { $0.append("late enough \(Date().timeIntervalSince(start) >= 0.0199)") } }
            let cancelled = loop.perform(after: 0.01) { log.withLock { $0.append("cancelled ran") } }
            cancelled.invalidate()
            loop.run()
            return log.withLock { $0 }
        }
        #expect(log == ["late enough true"])
    }

    @Test func RL02_modesConvertBothWays() {
        #expect(LoopMode(RunLoop.Mode.default) == .default)
        #expect(LoopMode(RunLoop.Mode.common) == .common)
        #expect(LoopMode(RunLoop.Mode("tracking")) == "tracking")
        #expect(RunLoop.Mode(LoopMode.default) == .default)
        #expect(RunLoop.Mode(LoopMode.common) == .common)
        #expect(RunLoop.Mode(LoopMode("tracking")).rawValue == "tracking")
    }
}
