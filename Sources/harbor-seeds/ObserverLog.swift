// Harbor — seed 002: an observer of every activity, a 0.1 s timer, runUntilDate in a loop.
import Harbor

/// `CFRunLoopObserverCreate(kCFRunLoopAllActivities)` in default, a repeating
/// timer, and `do { [myRunLoop runUntilDate:+1s] } while (--loopCount)`.
/// The article notes: without the timer the loop exits at once and no
/// notification is sent. Times are scaled down (10 ms timer, 50 ms runs, 3 runs).
enum ObserverLog: Experiment {
    static let name = "observers"
    static let summary = "an observer logging each activity around a repeating timer"
    static let article = "seed 002, 二、配置 Run Loop (threadMain with an observer and a timer)"
    static let expected = "each runUntilDate: entry, then per wake-up beforeTimers, beforeSources, beforeWaiting, afterWaiting, the timer; exit; without the timer: no notification at all"

    static func run() -> [String] {
        let log = Log()
        onNewThread {
            let loop = Loop.current
            loop.add(LoopObserver(activities: .all) { log("observer: \($0)") }, forMode: .default)
            // First without the timer: the run exits at once, nobody is told.
            loop.run(until: .now + .milliseconds(50))
            log("without a timer: runUntilDate returned at once")
            let timer = LoopTimer(after: .milliseconds(10), repeating: .milliseconds(10)) { _ in log("log: doFireTimer") }
            loop.add(timer, forMode: .default)
            for loopCount in (0..<3).reversed() {
                loop.run(until: .now + .milliseconds(50))
                log("while循环-\(loopCount)")
            }
            timer.invalidate()
        }
        return log.all
    }

    static func matches(_ log: [String]) -> Bool {
        guard log.first == "without a timer: runUntilDate returned at once" else { return false }
        let runs = log.dropFirst().split { $0.hasPrefix("while循环") }
        guard runs.count == 3, log.last == "while循环-0" else { return false }
        return runs.allSatisfy { run in
            let lines = Array(run)
            guard lines.first == "observer: entry", lines.last == "observer: exit" else { return false }
            let fires = lines.indices.filter { lines[$0] == "log: doFireTimer" }
            // Every fire follows a wake-up; the loop sleeps between fires.
            return fires.count >= 2 && fires.allSatisfy { index in
                lines[..<index].last { $0.hasPrefix("observer:") } == "observer: afterWaiting"
            }
        }
    }
}
