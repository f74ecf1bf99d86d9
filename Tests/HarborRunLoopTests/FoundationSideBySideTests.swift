// Harbor — Foundation and Harbor imported together: no name needs qualifying.
import Foundation
import Harbor
import HarborTestSupport
import Testing

extension RunLoopTests {
    @Suite struct FoundationSideBySideTests {
        @Test func namesDoNotCollide_foundationAndHarborLoopsSideBySide() {
            // Foundation's types, unqualified.
            let foundationLoop: RunLoop = RunLoop.current
            let foundationTimer = Timer(timeInterval: 60, repeats: false) { _ in }
            foundationLoop.add(foundationTimer, forMode: .default)
            foundationTimer.invalidate()
            let done = DispatchSemaphore(value: 0)
            let log = EventLog()
            // Harbor's types, unqualified, driven from a Foundation Thread.
            let thread = Thread {
                let loop: Loop = Loop.current
                let mode: LoopMode = .default
                let timer: LoopTimer = LoopTimer(after: .milliseconds(1)) { _ in log.append("harbor timer") }
                loop.add(timer, forMode: mode)
                let result: LoopRunResult = loop.run(mode: mode, timeout: .seconds(5), returnAfterSourceHandled: false)
                log.append("\(result)")
                done.signal()
            }
            thread.start()
            done.wait()
            #expect(log.all == ["harbor timer", "finished"])
            let _: LoopActivity = .all
            let _: RunLoop.Mode = .default
        }
    }
}
