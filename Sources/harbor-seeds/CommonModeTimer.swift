// Harbor — seed 000 §3<2>, seed 001 and seed 004 §4: a timer in common modes fires while "scrolling".
import Harbor
import Synchronization
import HarborSystem

/// The scroll-view problem: a timer in default stops while the loop runs
/// `UITrackingRunLoopMode`; a timer added for the common modes keeps firing.
/// A worker stands in for the main thread: it adds tracking to its common
/// modes (on iOS the main loop has it there already), then "scrolls" (runs
/// tracking for 100 ms) and "stops scrolling" (runs default for 100 ms).
enum CommonModeTimer: Experiment {
    static let name = "common-timer"
    static let summary = "a common-modes timer fires in UITrackingRunLoopMode, a default one does not"
    static let article = "seed 000, 3.<2>使用NSTimer遇到的坑; seed 001, RunLoop 的 Mode; seed 004, 4. Run Loop Modes"

    static func run(print: @escaping @Sendable (String) -> Void) {
        // snippet: seed-common-timer
        let once = FirstTime(print)                                       // logs each distinct line once
        let thread = LoopThread(name: "main stand-in") {
            let runLoop = Loop.current
            let tracking: LoopMode = "UITrackingRunLoopMode"
            runLoop.addCommonMode(tracking)                               // what UIKit does for the main run loop
            let defaultTimer = LoopTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { _ in
                once("default-mode timer fired in \(Loop.current.currentMode?.name ?? "none")")
            }
            let commonTimer = LoopTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { _ in
                once("common-modes timer fired in \(Loop.current.currentMode?.name ?? "none")")
            }
            runLoop.add(defaultTimer, forMode: .default)                  // addTimer:timer forMode:NSDefaultRunLoopMode
            runLoop.add(commonTimer, forMode: .common)                    // addTimer:timer forMode:NSRunLoopCommonModes
            print("scrolling: running UITrackingRunLoopMode")
            _ = runLoop.run(mode: tracking, timeout: .milliseconds(100), returnAfterSourceHandled: false)
            print("scroll ended: running default")
            _ = runLoop.run(mode: .default, timeout: .milliseconds(100), returnAfterSourceHandled: false)
            defaultTimer.invalidate()
            commonTimer.invalidate()
        }
        thread.start()
        thread.join()
        // end snippet
    }
}

/// Passes each distinct line on only the first time it happens.
final class FirstTime: Sendable {
    private let seen = HarborLock<Set<String>>([])
    private let print: @Sendable (String) -> Void
    init(_ print: @escaping @Sendable (String) -> Void) { self.print = print }
    func callAsFunction(_ line: String) {
        if seen.withLock({ $0.insert(line).inserted }) { print(line) }
    }
}
