// Harbor — seed 003: a repeating timer keeps a thread alive, a one-shot one does not.
import Harbor
import Synchronization

/// `[NSTimer scheduledTimerWithTimeInterval:2 … repeats:]` then `[runLoop run]`.
/// With `repeats:YES` the thread lives on and work posted later still runs.
/// With `repeats:NO` the timer leaves the mode after firing, the mode is
/// empty, `run` returns ("End Run.") and work posted later never runs.
enum TimerKeepAlive: Experiment {
    static let name = "timer-keepalive"
    static let summary = "repeating vs one-shot timer as the only thing keeping a thread alive"
    static let article = "seed 003, 对 repeat 的思考 / 总结 2"
    static let expected = "repeats:YES — the thread outlives the timer's first fire and runAnyTime runs on it ('End Run.' only once we invalidate the timer); repeats:NO — 'timerRun', then 'End Run.', later work never runs"

    static func run() -> [String] { trial(repeats: true) + trial(repeats: false) }

    static func trial(repeats: Bool) -> [String] {
        let log = Log()
        let tag = repeats ? "[repeats:YES]" : "[repeats:NO]"
        let handoff = Handoff<LoopTimer>()
        let loopHandoff = Handoff<Loop>()
        let firstFire = Gate()
        let worker = Background {
            let loop = Loop.current
            let fired = Once()
            let timer = LoopTimer(after: .milliseconds(20), repeating: repeats ? .milliseconds(20) : nil) { _ in
                // Logged on the worker, in the timer's callout: before `run` can return.
                if fired.first() { log("\(tag) timerRun") }
                firstFire.open()
            }
            loop.add(timer, forMode: .default)
            loopHandoff.put(loop)
            handoff.put(timer)
            loop.run()
            log("\(tag) End Run.")
        }
        let loop = loopHandoff.take()
        let timer = handoff.take()
        firstFire.wait()
        if repeats {
            // The "touch" after the timer fired: the thread is still there.
            do {
                try loop.performAndWait { log("\(tag) runAnyTime on the worker") }
            } catch {
                log("\(tag) runAnyTime never runs (\(error.code))")
            }
            log("\(tag) main: invalidating the timer")
            timer.invalidate()
            worker.join()
        } else {
            worker.join()
            do {
                try loop.performAndWait { log("\(tag) runAnyTime on the worker") }
            } catch {
                log("\(tag) runAnyTime never runs (\(error.code))")
            }
        }
        return log.all
    }

    static func matches(_ log: [String]) -> Bool {
        log == [
            "[repeats:YES] timerRun", "[repeats:YES] runAnyTime on the worker",
            "[repeats:YES] main: invalidating the timer", "[repeats:YES] End Run.",
            "[repeats:NO] timerRun", "[repeats:NO] End Run.", "[repeats:NO] runAnyTime never runs (loop terminated)",
        ]
    }
}

/// True the first time `first()` is called, false after.
final class Once: Sendable {
    private let done = Atomic(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
