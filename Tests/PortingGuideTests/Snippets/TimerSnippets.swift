// Harbor — Porting.md's timer, observer and perform snippets (each between its markers, shown verbatim in the guide).
import Harbor
import Synchronization

extension Snippets {
    /// NSTimer and CFRunLoopTimer: relative and absolute fire dates, tolerance, the callout's timer.
    static func timers(print: @escaping @Sendable (String) -> Void) {
        // snippet: timers
        let runLoop = Loop.current
        // [NSTimer timerWithTimeInterval:0.01 repeats:YES block:^(NSTimer *timer){ … }], tolerance 0.001
        let ticks = Atomic(0)
        let ticker = LoopTimer(after: .milliseconds(10), repeating: .milliseconds(10), tolerance: .milliseconds(1)) { timer in
            let count = ticks.add(1, ordering: .relaxed).newValue
            print("tick \(count)")
            if count == 3 { timer.invalidate() }                          // [timer invalidate] from its own callout
        }
        runLoop.add(ticker, forMode: .default)
        // CFRunLoopTimerCreate(…, fireDate, 0, …): an absolute date, read back and moved
        let start = ContinuousClock.now
        let later = LoopTimer(at: start + .seconds(60)) { _ in print("moved timer fired") }
        runLoop.add(later, forMode: .default)
        print("fire date kept: \(later.nextFireDate == start + .seconds(60))")      // CFRunLoopTimerGetNextFireDate
        if let next = runLoop.nextTimerFireDate(forMode: .default) {     // CFRunLoopGetNextTimerFireDate(rl, mode)
            print("the mode's next fire is the ticker's: \(next < start + .seconds(1))")
        }
        later.setNextFireDate(start + .milliseconds(30))                  // CFRunLoopTimerSetNextFireDate, [timer setFireDate:]
        runLoop.run(until: start + .seconds(5))                           // runUntilDate: until the mode empties
        print("valid: \(ticker.isValid) \(later.isValid)")
        // end snippet
    }

    /// CFRunLoopObserver: order, one-shot observers, the callout's observer.
    static func observers(print: @escaping @Sendable (String) -> Void) {
        // snippet: observers
        let runLoop = Loop.current
        // The autorelease-pool pair UIKit installs: push first on entry, pop last before sleeping and on exit.
        let push = LoopObserver(activities: [.entry], order: .min) { _ in print("push pool") }
        let pop = LoopObserver(activities: [.beforeWaiting, .exit], order: .max) { activity in print("pop pool (\(activity))") }
        // CFRunLoopObserverCreateWithHandler(…, kCFRunLoopBeforeWaiting, NO /* repeats */, 0, ^(observer, activity){ … })
        let once = LoopObserver(activities: [.beforeWaiting], repeats: false) { observer, activity in
            print("once, still valid inside its callout: \(observer.isValid)")
        }
        for observer in [push, pop, once] { runLoop.add(observer, forMode: .default) }   // CFRunLoopAddObserver
        let timer = LoopTimer(after: .milliseconds(10)) { _ in print("timer") }
        runLoop.add(timer, forMode: .default)
        runLoop.run(until: .now + .seconds(5))                            // returns when the one-shot timer leaves
        print("once valid after: \(once.isValid)")
        push.invalidate()                                                 // CFRunLoopObserverInvalidate
        pop.invalidate()
        // end snippet
    }

    /// performSelector…: on a thread, in named modes, after a delay; CFRunLoopPerformBlock.
    static func perform(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: perform
        let runLoop = Loop.current
        // performSelector:withObject:afterDelay:inModes:@[NSDefaultRunLoopMode]: a one-shot timer
        runLoop.perform(after: .milliseconds(1), inModes: [.default]) { print("delayed perform") }
        let cancelled = runLoop.perform(after: .milliseconds(1)) { print("never runs") }
        cancelled.invalidate()                                            // cancelPreviousPerformRequestsWithTarget:
        runLoop.perform(inModes: [.default]) { print("block in default") } // CFRunLoopPerformBlock(rl, @[NSDefaultRunLoopMode], ^{ … })
        runLoop.run(until: .now + .seconds(5))                            // the block, then the delayed perform, then empty
        let worker = LoopWorker(name: "worker")
        worker.perform { print("on worker") }                             // performSelector:onThread:worker …waitUntilDone:NO
        try worker.performAndWait { print("waited on worker") }           // …waitUntilDone:YES
        worker.stop()
        // end snippet
    }
}
