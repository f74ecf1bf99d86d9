// Harbor — observers: the order of activities in a pass, and among observers.
@testable import HarborRunLoop
import HarborTestSupport
import Testing

extension RunLoopTests {
    @Suite struct ObserverTests {
        @Test func RL10_onePassNotifiesInDarwinsOrder() {
            expectNoDescriptorLeak {
                let log = onFreshThread { () -> [String] in
                    let loop = Loop.current
                    let log = EventLog()
                    loop.add(LoopObserver(activities: .all) { log.append("\($0)") }, forMode: .default)
                    let source = LoopSource { log.append("source") }
                    loop.add(source, forMode: .default)
                    source.signal()
                    loop.perform { log.append("block") }
                    // Pass 1: a block and a source ran, so no sleep. Pass 2: sleep until the timer.
                    loop.add(LoopTimer(after: .milliseconds(5)) { _ in
                        log.append("timer")
                        source.invalidate()  // the mode empties: this pass is the last
                        loop.perform { log.append("late block") }
                    }, forMode: .default)
                    let result = loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: false)
                    log.append("\(result)")
                    return log.all
                }
                #expect(log == [
                    "entry",
                    "beforeTimers", "beforeSources", "block", "source",
                    "beforeTimers", "beforeSources", "beforeWaiting", "afterWaiting", "timer", "late block",
                    "exit", "finished",
                ], "\(log)")
            }
        }

        @Test func RL10_observersRunInAscendingOrder_andNonRepeatingOnesRunOnce() {
            expectNoDescriptorLeak {
                let log = onFreshThread { () -> [String] in
                    let loop = Loop.current
                    let log = EventLog()
                    loop.add(LoopObserver(activities: .beforeTimers, order: .max) { _ in log.append("max") }, forMode: .default)
                    loop.add(LoopObserver(activities: .beforeTimers, order: 0) { _ in log.append("zero") }, forMode: .default)
                    loop.add(LoopObserver(activities: .beforeTimers, repeats: false, order: 1) { _ in log.append("once") },
                             forMode: .default)
                    loop.add(LoopObserver(activities: .beforeTimers, order: .min) { _ in log.append("min") }, forMode: .default)
                    let source = LoopSource {}
                    loop.add(source, forMode: .default)
                    for _ in 0..<2 {
                        source.signal()
                        _ = loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
                    }
                    return log.all
                }
                #expect(log == ["min", "zero", "once", "max", "min", "zero", "max"])
            }
        }
    }
}
