// Harbor — seed 000's "biggest takeaway": switching a worker between default and tracking.
import Harbor
import Synchronization

/// The worker runs `while (!stop) [runLoop runMode:self.runLoopMode beforeDate:distantFuture]`,
/// with a port in default and a repeating timer in tracking. "Scrolling" is a
/// second thread posting `changeSubThreadRunLoopMode:` with
/// `performSelector:onThread:` (here `Loop.perform`, which goes to the common
/// modes). Switching to tracking works (the worker is in default, which is
/// common); switching back does not: the worker now runs tracking, which is
/// not in a worker's common set, so the posted work waits forever and the
/// timer keeps firing. The "更正" gives two fixes: add tracking to the common
/// modes, or post the switch naming tracking explicitly.
enum ModeSwitching: Experiment {
    enum Variant: String, CaseIterable { case original, commonModeFix = "fix 1: addCommonMode", namedModeFix = "fix 2: perform inModes" }

    static let name = "mode-switching"
    static let summary = "worker switching default ⇄ tracking with perform (before and after the 更正)"
    static let article = "seed 000, 关于子线程RunLoop切换Mode的思考 and 更正"
    static let expected = "original: the switch back to default never runs, the timer keeps firing; both fixes: the switch back runs"

    static func run() -> [String] { Variant.allCases.flatMap { trial($0) } }

    static func trial(_ variant: Variant) -> [String] {
        let log = Log()
        let tag = "[\(variant.rawValue)]"
        let mode = Mutex<LoopMode>(.default)
        let stopping = Mutex(false)
        let fires = Mutex(0)
        let threeFires = Gate()
        let settled = Gate()
        let switchedBack = Mutex(false)
        let loopHandoff = Handoff<Loop>()
        let worker = Background {
            let loop = Loop.current
            let port = makePortSource()
            loop.add(port, forMode: .default)
            loop.add(LoopTimer(after: .milliseconds(10), repeating: .milliseconds(10)) { _ in
                let count = fires.withLock { $0 += 1; return $0 }
                if count <= 3 { log("\(tag) Timer fired, currentMode: \(Loop.current.currentMode!)") }
                if count == 3 { threeFires.open() }
                if count == 6 && !switchedBack.withLock({ $0 }) { settled.open() }
            }, forMode: "tracking")
            if variant == .commonModeFix { loop.addCommonMode("tracking") }
            loopHandoff.put(loop)
            while !stopping.withLock({ $0 }) {
                loop.run(mode: mode.withLock { $0 }, before: nil)
            }
            log("\(tag) worker ends")
        }
        let loop = loopHandoff.take()
        // scrollViewDidScroll: switch the worker to tracking.
        loop.perform {
            log("\(tag) changeSubThreadRunLoopMode: tracking")
            mode.withLock { $0 = "tracking" }
        }
        threeFires.wait()
        // scrollViewDidEndDragging: switch back to default.
        log("\(tag) scroll ended: posting the switch back to default")
        let switchBack: @Sendable () -> Void = {
            log("\(tag) changeSubThreadRunLoopMode: default")
            mode.withLock { $0 = .default }
            switchedBack.withLock { $0 = true }
            settled.open()
        }
        if variant == .namedModeFix { loop.perform(inModes: ["tracking"], switchBack) } else { loop.perform(switchBack) }
        settled.wait()
        if !switchedBack.withLock({ $0 }) { log("\(tag) the timer keeps firing in tracking; the switch never ran") }
        stopping.withLock { $0 = true }
        // A stop reaches only a running pass (CFRunLoopStop), and the worker
        // may be between two: post it, so its next pass in either mode runs it.
        loop.perform(inModes: [.default, "tracking"]) { Loop.current.stop() }
        worker.join()
        return log.all
    }

    static func matches(_ log: [String]) -> Bool {
        Variant.allCases.allSatisfy { variant in
            let tag = "[\(variant.rawValue)]"
            var expected = ["\(tag) changeSubThreadRunLoopMode: tracking"]
            expected += Array(repeating: "\(tag) Timer fired, currentMode: tracking", count: 3)
            expected.append("\(tag) scroll ended: posting the switch back to default")
            expected.append(variant == .original ? "\(tag) the timer keeps firing in tracking; the switch never ran"
                                                 : "\(tag) changeSubThreadRunLoopMode: default")
            expected.append("\(tag) worker ends")
            return log.filter { $0.hasPrefix(tag) } == expected
        }
    }
}
