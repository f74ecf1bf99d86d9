// Harbor — Porting.md's small CF forms: loop identity, a mode's string, timer queries, detaching a thread.
import Harbor

extension Snippets {
    /// CFRunLoop's identity and item queries, a mode's raw string, CFRunLoopTimerDoesRepeat and fire-date arithmetic.
    static func cfForms(print: @escaping @Sendable (String) -> Void) {
        // snippet: cf-forms
        let runLoop = Loop.current
        print("on the main thread: \(runLoop == Loop.main)")             // CFRunLoopGetCurrent() == CFRunLoopGetMain()
        let tracking = LoopMode(rawValue: "UITrackingRunLoopMode")        // NSRunLoop.Mode(rawValue:), a CFStringRef
        print("mode string: \(tracking.rawValue)")
        let timer = LoopTimer(after: .seconds(60), repeating: .seconds(60)) { _ in }
        runLoop.add(timer, forMode: tracking)                             // CFRunLoopAddTimer(rl, timer, mode)
        print("repeats: \(timer.repeats), in tracking: \(runLoop.contains(timer, inMode: tracking))")  // CFRunLoopTimerDoesRepeat, CFRunLoopContainsTimer
        let untilFire = timer.nextFireDate - .now                         // CFRunLoopTimerGetNextFireDate(t) - CFAbsoluteTimeGetCurrent()
        print("fires within a minute: \(untilFire > .zero && untilFire <= .seconds(60))")
        let afterThat = timer.nextFireDate + (timer.interval ?? .zero)    // … + CFRunLoopTimerGetInterval(t): the fire after next
        print("the fire after next: \(afterThat - timer.nextFireDate) later")
        runLoop.remove(timer, forMode: tracking)                          // CFRunLoopRemoveTimer: not an invalidation
        print("in tracking: \(runLoop.contains(timer, inMode: tracking)), valid: \(timer.isValid)")
        timer.invalidate()
        // end snippet
    }

    /// +[NSThread detachNewThreadSelector:toTarget:withObject:] and detachNewThreadWithBlock:.
    static func detachThread(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: detach-thread
        // [NSThread detachNewThreadWithBlock:^{ … }], or detachNewThreadSelector:@selector(work:) toTarget:t withObject:arg
        let argument = "arg"                                              // withObject: becomes a capture
        let detached = LoopThread(name: "detached") { print("work: \(argument) on \(LoopThread.current?.name ?? "?")") }
        detached.start()                                                  // detach is make, then start
        detached.join()                                                   // optional: NSThread has no join
        // A detached thread that should live on and take work: a LoopWorker.
        let worker = LoopWorker(name: "background")
        try worker.performAndWait { print("performed on background") }
        worker.stop()
        // end snippet
    }
}
