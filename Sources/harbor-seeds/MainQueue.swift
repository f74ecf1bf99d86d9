// Harbor — seed 001 关于GCD: dispatch_async to the main queue wakes the main run loop.
import Dispatch
import Harbor

/// `dispatch_async(dispatch_get_main_queue(), block)` from another thread:
/// libdispatch wakes the main thread's run loop, which runs the block in
/// `__CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__`; work sent to other
/// queues is libdispatch's alone and never meets a run loop. This one needs
/// the process's main thread, which harbor-seeds runs its experiments on.
enum MainQueue: Experiment {
    static let name = "main-queue"
    static let summary = "dispatch_async(dispatch_get_main_queue()) runs on the main run loop"
    static let article = "seed 001, 關于GCD"

    static func run(print: @escaping @Sendable (String) -> Void) {
        guard Loop.main.isCurrent else { return print("main-queue: not on the main thread") }
        // If the block never came, stop anyway and say so.
        let watchdog = LoopTimer(after: .seconds(10)) { _ in
            print("the main-queue block never ran")
            Loop.main.stop()
        }
        Loop.main.add(watchdog, forMode: .default)
        // snippet: seed-main-queue
        DispatchQueue.global().async {                                    // some worker thread
            print("global queue block: on the main run loop's thread \(Loop.main.isCurrent)")
            DispatchQueue.main.async {                                    // dispatch_async(dispatch_get_main_queue(), ^{ … })
                print("main queue block: on the main run loop's thread \(Loop.main.isCurrent), mode \(Loop.main.currentMode?.name ?? "none")")
                Loop.main.stop()                                          // CFRunLoopStop(CFRunLoopGetMain())
            }
        }
        Loop.main.runUntilStopped()                                       // CFRunLoopRun() on the main thread
        // end snippet
        watchdog.invalidate()
        print("main run loop stopped")
    }
}
