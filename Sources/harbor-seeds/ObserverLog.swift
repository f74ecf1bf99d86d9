// Harbor — seed 002: an observer of every activity, a 0.1 s timer, runUntilDate: in a loop.
import Harbor

/// `CFRunLoopObserverCreate(kCFRunLoopAllActivities)` in default, a repeating
/// `scheduledTimerWithTimeInterval:0.1`, and `do { [myRunLoop runUntilDate:+1s] }
/// while (--loopCount)`. The article's comment: without the timer the loop
/// exits as soon as it starts and no notification is sent. Times are scaled
/// down: a 10 ms timer, 50 ms runs, 3 of them.
enum ObserverLog: Experiment {
    static let name = "observers"
    static let summary = "an observer logging each activity around a repeating timer"
    static let article = "seed 002, 使用RunLoop对象 二、配置 Run Loop (threadMain)"

    static func run(print: @escaping @Sendable (String) -> Void) {
        // snippet: seed-observers
        let thread = LoopThread(name: "threadMain") {
            let myRunLoop = Loop.current
            // CFRunLoopObserverCreate(kCFAllocatorDefault, kCFRunLoopAllActivities, YES, 0, observeRunLoopActicities, &context)
            let observer = LoopObserver(activities: .all, repeats: true, order: 0) { activity in
                print("observer: \(activity)")
            }
            myRunLoop.add(observer, forMode: .default)                    // CFRunLoopAddObserver(cfLoop, observer, kCFRunLoopDefaultMode)
            myRunLoop.run(until: .now + .milliseconds(50))                // no timer yet: returns at once, nobody is told
            print("without a timer: runUntilDate returned at once")
            // [NSTimer scheduledTimerWithTimeInterval:0.1 target:self selector:@selector(doFireTimer:) … repeats:YES]
            let timer = LoopTimer(after: .milliseconds(10), repeating: .milliseconds(10)) { _ in
                print("log: -[ViewController doFireTimer:]")
            }
            myRunLoop.add(timer, forMode: .default)
            var loopCount = 3
            repeat {
                myRunLoop.run(until: .now + .milliseconds(50))            // [myRunLoop runUntilDate:[NSDate dateWithTimeIntervalSinceNow:1]]
                loopCount -= 1
                print("while循环-\(loopCount)")
            } while loopCount > 0
            timer.invalidate()
        }
        thread.start()
        thread.join()
        // end snippet
    }
}
