// Harbor — Porting.md's HarborFoundation snippet: NSRunLoop and NSTimer code in Date and TimeInterval.
import Foundation
import Harbor
import HarborFoundation

extension Snippets {
    /// RunLoop → Loop, Timer → LoopTimer, RunLoop.Mode → LoopMode: the rest reads the same.
    static func foundationForms(print: @escaping @Sendable (String) -> Void) {
        // snippet: foundation-forms
        let runLoop = Loop.current                                        // RunLoop.current
        let timer = LoopTimer.scheduledTimer(withTimeInterval: 60, repeats: false) { _ in
            print("timer fired")
        }
        let soon = Date(timeIntervalSinceNow: 0.1)
        timer.fireDate = soon                                             // timer.fireDate = soon
        timer.tolerance = 0.001                                           // timer.tolerance = 0.001
        print("fireDate reads back: \(timer.fireDate == soon), timeInterval \(timer.timeInterval)")
        print("limitDate is the timer's: \(runLoop.limitDate(forMode: .default) == soon)")
        runLoop.run(until: Date(timeIntervalSinceNow: 5))                 // runLoop.run(until:), back once the mode is empty
        runLoop.perform(after: 0.001) { print("performed after 0.001 s") } // perform(_:with:afterDelay:)
        let mode = LoopMode(RunLoop.Mode.default)                         // a Foundation mode, converted
        print("run(mode:before:) \(runLoop.run(mode: mode, before: .distantFuture))")
        print("then \(runLoop.run(mode: .default, before: .distantFuture))")   // NO: nothing left to run
        // end snippet
    }
}
