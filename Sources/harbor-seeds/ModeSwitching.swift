// Harbor — seed 000's "biggest takeaway": switching a worker between default and tracking.
import Dispatch
import Harbor
import Synchronization
import HarborSystem

/// The worker runs `while (!stop) [runLoop runMode:self.runLoopMode beforeDate:distantFuture]`
/// with a port in default and a repeating timer in `UITrackingRunLoopMode`.
/// "Scrolling" is the main thread performing `changeSubThreadRunLoopMode:`
/// on the worker (`performSelector:onThread:`, which goes to the common
/// modes). Switching to tracking works (the worker is in default, which is
/// common); switching back does not: the worker now runs tracking, which is
/// not in a worker's common set, so the perform waits and the timer keeps
/// firing. The "更正" gives two fixes: add tracking to the common modes, or
/// perform the switch naming tracking (`…waitUntilDone:modes:`).
enum ModeSwitching: Experiment {
    enum Variant: String, CaseIterable { case original, commonModeFix = "fix 1: addCommonMode", namedModeFix = "fix 2: perform modes:" }

    static let name = "mode-switching"
    static let summary = "worker switching default ⇄ UITrackingRunLoopMode with perform (before and after the 更正)"
    static let article = "seed 000, 关于子线程RunLoop切换Mode的思考 and 更正"

    static func run(print: @escaping @Sendable (String) -> Void) {
        for variant in Variant.allCases { trial(variant, print: print) }
    }

    static func trial(_ variant: Variant, print: @escaping @Sendable (String) -> Void) {
        let tag = "[\(variant.rawValue)]"
        let fires = HarborLock(0)
        let threeFires = DispatchSemaphore(value: 0)
        let sixFires = DispatchSemaphore(value: 0)
        let switchedBack = DispatchSemaphore(value: 0)
        // The article's properties, shared by the two threads.
        let runLoopMode = HarborLock<LoopMode>(.default)                  // @property NSRunLoopMode runLoopMode
        let isNeedRunLoopStop = HarborLock(false)                         // @property BOOL isNeedRunLoopStop
        // snippet: seed-mode-switching
        let tracking: LoopMode = "UITrackingRunLoopMode"
        let subThread = LoopThread(name: "subThread") {                   // subThreadTodo
            let runLoop = Loop.current
            guard let port = try? PortSource(ReceiveRight(), { _ in }) else { return }
            runLoop.add(port, forMode: .default)                          // addPort:[NSMachPort port] forMode:NSDefaultRunLoopMode
            let timer = LoopTimer(after: .milliseconds(20), repeating: .milliseconds(20)) { _ in   // timerTodo
                let count = fires.withLock { $0 += 1; return $0 }
                if count <= 6 { print("\(tag) Timer启动啦,当前RunLoopMode:\(Loop.current.currentMode?.name ?? "none")") }
                if count == 3 { threeFires.signal() }
                if count == 6 { sixFires.signal() }
            }
            runLoop.add(timer, forMode: tracking)                         // addTimer:timer forMode:UITrackingRunLoopMode
            if variant == .commonModeFix {
                runLoop.addCommonMode(tracking)                           // CFRunLoopAddCommonMode(CFRunLoopGetCurrent(), UITrackingRunLoopMode)
            }
            while !isNeedRunLoopStop.withLock({ $0 }) {
                runLoop.run(mode: runLoopMode.withLock { $0 }, before: nil)  // runMode:self.runLoopMode beforeDate:distantFuture
            }
            timer.invalidate()
        }
        let changeSubThreadRunLoopMode = { @Sendable (mode: LoopMode) in
            print("\(tag) 当前线程:subThread RunLoop即将将Mode改变成:\(mode)")
            runLoopMode.withLock { $0 = mode }
            if mode == .default { switchedBack.signal() }
        }
        subThread.start()
        // scrollViewDidScroll: performSelector:onThread:withObject:UITrackingRunLoopMode waitUntilDone:NO
        subThread.perform { changeSubThreadRunLoopMode(tracking) }
        threeFires.wait()
        print("\(tag) scroll ended: posting the switch back to default")
        // scrollViewDidEndDragging: the same with NSDefaultRunLoopMode (fix 2: … modes:@[UITrackingRunLoopMode])
        if variant == .namedModeFix {
            subThread.perform(inModes: [tracking]) { changeSubThreadRunLoopMode(.default) }
        } else {
            subThread.perform { changeSubThreadRunLoopMode(.default) }
        }
        // end snippet
        if variant == .original {
            sixFires.wait()
            print("\(tag) three more fires in UITrackingRunLoopMode: the switch back never ran")
        } else {
            switchedBack.wait()
        }
        // Stop the worker: set the flag, then post a block for either mode
        // so its current run returns and the while sees the flag.
        isNeedRunLoopStop.withLock { $0 = true }
        subThread.perform(inModes: [.default, tracking]) {}
        subThread.join()
        print("\(tag) worker ends")
    }
}
