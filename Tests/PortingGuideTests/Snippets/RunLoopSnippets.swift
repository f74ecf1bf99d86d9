// Harbor — Porting.md's run-loop snippets: threads, running, modes (each between its markers, shown verbatim in the guide).
import Harbor

/// The guide's snippets, one function each. `print` stands for the
/// developer's `NSLog`: the tests pass a recorder and check what it got.
enum Snippets {
    /// NSThread and the loop it gets: `LoopThread`, `Loop.current`, `Loop.main`.
    static func loopsAndThreads(print: @escaping @Sendable (String) -> Void) {
        // snippet: loops-and-threads
        let thread = LoopThread(name: "subThread") {                      // [[NSThread alloc] initWithBlock:^{ … }]
            let runLoop = Loop.current                                    // [NSRunLoop currentRunLoop], CFRunLoopGetCurrent()
            print("on subThread: isMain \(runLoop.isMain), ran: \(runLoop.run(mode: .default, before: nil))")
        }
        // performSelector:onThread:waitUntilDone:NO before [thread start]: it waits in
        // the thread's loop, and keeps that loop's first run alive until it ran.
        thread.perform { print("performed on subThread") }
        print("executing before start: \(thread.isExecuting)")            // [thread isExecuting]
        thread.start()                                                    // [thread start]
        thread.start()                                                    // a second start does nothing (NSThread raises)
        thread.join()
        print("finished: \(thread.isFinished)")                           // [thread isFinished]
        // end snippet
    }

    /// CFRunLoopRunInMode and runMode:beforeDate:, with a version-0 source.
    static func runInMode(print: @escaping @Sendable (String) -> Void) {
        // snippet: run-in-mode
        let runLoop = Loop.current
        print("empty mode: \(runLoop.run(mode: .default, before: nil))") // runMode:beforeDate: says NO, at once
        let source = LoopSource { print("source0 performed") }            // CFRunLoopSourceCreate (version 0)
        runLoop.add(source, forMode: .default)                            // CFRunLoopAddSource(rl, source, kCFRunLoopDefaultMode)
        source.signal()                                                   // CFRunLoopSourceSignal(source)
        runLoop.wakeUp()                                                  // CFRunLoopWakeUp(rl)
        let handled = runLoop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
        print("CFRunLoopRunInMode(…, 10, true): \(handled)")             // kCFRunLoopRunHandledSource
        let timedOut = runLoop.run(mode: .default, timeout: .milliseconds(10), returnAfterSourceHandled: false)
        print("CFRunLoopRunInMode(…, 0.01, false): \(timedOut)")         // kCFRunLoopRunTimedOut
        source.invalidate()                                               // CFRunLoopSourceInvalidate(source)
        print("after invalidate: \(runLoop.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: false))")
        // end snippet
    }

    /// Seed 002's skeletonThreadMain: CFRunLoopRunInMode until stopped or finished.
    static func skeletonThreadMain(print: @escaping @Sendable (String) -> Void) {
        // snippet: skeleton-thread-main
        var handledCount = 0
        let source = LoopSource { source in
            print("source handled")
            source.invalidate()                                           // the mode empties: the next run says finished
        }
        Loop.current.add(source, forMode: .default)
        source.signal()
        var done = false
        repeat {
            // Start the run loop but return after each source is handled.
            let result = Loop.current.run(mode: .default, timeout: .seconds(10), returnAfterSourceHandled: true)
            if result == .handledSource { handledCount += 1 }
            // If a source explicitly stopped the run loop, or if there are no sources or timers, go ahead and exit.
            if result == .stopped || result == .finished { done = true }
        } while !done
        // end snippet
        print("handled \(handledCount), then done")
    }

    /// AFNetworking's permanent thread and seed 004's cancellable one: LoopWorker.
    static func permanentThread(print: @escaping @Sendable (String) -> Void) throws {
        // snippet: permanent-thread
        // addPort:[NSMachPort port] + [runLoop run] in the thread's main, or
        // while (!self.isCancelled) [runLoop runUntilDate:…]: one object.
        let networkThread = LoopWorker(name: "AFNetworking")
        networkThread.perform { print("request started on AFNetworking") }   // performSelector:onThread:…waitUntilDone:NO
        try networkThread.performAndWait { print("waited for AFNetworking") } // …waitUntilDone:YES
        networkThread.stop()                                              // [thread cancel], and the thread really ends
        do {
            try networkThread.performAndWait { print("never runs") }
        } catch {
            print("after stop: \(error.code)")
        }
        // end snippet
    }

    /// Modes: custom modes, the common set, the current mode.
    static func modes(print: @escaping @Sendable (String) -> Void) {
        // snippet: modes
        let runLoop = Loop.current
        let tracking: LoopMode = "UITrackingRunLoopMode"                  // any NSString names a mode
        print("common: \(runLoop.commonModes)")                            // a thread's common set: default only
        runLoop.addCommonMode(tracking)                                   // CFRunLoopAddCommonMode(rl, UITrackingRunLoopMode)
        print("common: \(runLoop.commonModes)")
        let source = LoopSource { _ in print("handled in \(Loop.current.currentMode?.name ?? "no mode")") }  // currentMode
        runLoop.add(source, forMode: .common)                             // …forMode:NSRunLoopCommonModes: default and tracking
        print("in tracking: \(runLoop.contains(source, inMode: tracking))")
        source.signal()
        _ = runLoop.run(mode: tracking, timeout: .seconds(10), returnAfterSourceHandled: true)
        print("modes: \(runLoop.allModes.map(\.name).sorted())")         // CFRunLoopCopyAllModes
        source.invalidate()
        // end snippet
    }
}
