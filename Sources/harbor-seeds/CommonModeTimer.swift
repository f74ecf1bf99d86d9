// Harbor — seed 000 §3 and seed 004 §4: a timer in common modes fires in a custom mode.
import Harbor
import Synchronization

/// The scroll-view problem: a timer in default stops while the loop runs
/// tracking; a timer added for common modes keeps firing. Here the worker
/// adds "tracking" to its common set (a main thread has it there already).
enum CommonModeTimer: Experiment {
    static let name = "common-timer"
    static let summary = "a common-modes timer fires in 'tracking', a default one does not"
    static let article = "seed 000, 3.<2> 使用NSTimer遇到的坑; seed 004, 4. Run Loop Modes"
    static let expected = "while 'scrolling' (tracking) only the common timer fires; back in default both fire"

    static func run() -> [String] {
        let log = Log()
        onNewThread {
            let loop = Loop.current
            loop.addCommonMode("tracking")
            let once = FirstTime(log)
            let defaultTimer = LoopTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { _ in
                once("default-mode timer fired in \(Loop.current.currentMode!)")
            }
            let commonTimer = LoopTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { _ in
                once("common-modes timer fired in \(Loop.current.currentMode!)")
            }
            loop.add(defaultTimer, forMode: .default)
            loop.add(commonTimer, forMode: .common)
            log("scrolling: running tracking")
            _ = loop.run(mode: "tracking", timeout: .milliseconds(40), returnAfterSourceHandled: false)
            log("scroll ended: running default")
            _ = loop.run(mode: .default, timeout: .milliseconds(40), returnAfterSourceHandled: false)
            defaultTimer.invalidate()
            commonTimer.invalidate()
        }
        return log.all
    }

    static func matches(_ log: [String]) -> Bool {
        guard log.count == 5, log[0] == "scrolling: running tracking", log[1] == "common-modes timer fired in tracking",
              log[2] == "scroll ended: running default" else { return false }
        return Set(log[3...]) == ["default-mode timer fired in default", "common-modes timer fired in default"]
    }
}

/// Logs each distinct line only the first time it happens.
final class FirstTime: Sendable {
    private let seen = Mutex<Set<String>>([])
    private let log: Log
    init(_ log: Log) { self.log = log }
    func callAsFunction(_ line: String) {
        if seen.withLock({ $0.insert(line).inserted }) { log(line) }
    }
}
