// Harbor — seed 003: a repeating timer keeps a thread alive, a one-shot one does not.
import Dispatch
import Harbor
import Synchronization

/// `[NSTimer scheduledTimerWithTimeInterval:2 … repeats:]` then `[runLoop run]`.
/// With `repeats:YES` the thread lives on and work performed on it later
/// still runs. With `repeats:NO` the timer leaves the mode after firing, the
/// mode is empty, `run` returns ("End Run.") and later work never runs.
/// Times are scaled down: 2 s becomes 20 ms.
enum TimerKeepAlive: Experiment {
    static let name = "timer-keepalive"
    static let summary = "repeating vs one-shot timer as the only thing keeping a thread alive"
    static let article = "seed 003, RunLoop: NSTimer 实现常驻线程的问题 (对 repeat 的思考, 总结 2)"

    static func run(print: @escaping @Sendable (String) -> Void) {
        trial(repeats: true, print: print)
        trial(repeats: false, print: print)
    }

    static func trial(repeats: Bool, print: @escaping @Sendable (String) -> Void) {
        let tag = repeats ? "[repeats:YES]" : "[repeats:NO]"
        let firstFire = DispatchSemaphore(value: 0)
        let fired = Once()
        // snippet: seed-timer-keepalive
        // _attachTimerToRunLoop: scheduledTimerWithTimeInterval:2 target:self selector:@selector(runTimer) repeats:
        let timer = LoopTimer(after: .milliseconds(20), repeating: repeats ? .milliseconds(20) : nil) { _ in
            if fired.first() { print("\(tag) veryitman--timerRun.") }
            firstFire.signal()
        }
        let thread = LoopThread(name: "veryitman-thread") {               // asyncRun
            Loop.current.add(timer, forMode: .default)
            Loop.current.run()                                            // [runLoop run]
            print("\(tag) veryitman--asyncRun. End Run.")
        }
        thread.start()
        // end snippet
        firstFire.wait()
        if repeats {
            // The "touch" after the timer fired: the thread is still there.
            runAnyTime(on: thread, tag: tag, print: print)
            print("\(tag) viewDidDisappear: [self.timer invalidate]")
            timer.invalidate()
            thread.join()
        } else {
            thread.join()
            runAnyTime(on: thread, tag: tag, print: print)
        }
    }

    /// `performSelector:@selector(runAnyTime) onThread:thread … waitUntilDone:YES`.
    static func runAnyTime(on thread: LoopThread, tag: String, print: @escaping @Sendable (String) -> Void) {
        do {
            try thread.performAndWait { print("\(tag) veryitman--runAnyTime. Current Thread: veryitman-thread") }
        } catch {
            print("\(tag) runAnyTime never runs (\(error.code))")
        }
    }
}

/// True the first time `first()` is called, false after.
final class Once: Sendable {
    private let done = Atomic(false)
    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
