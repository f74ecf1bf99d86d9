// Harbor — behaviours issue 14 found different from CFRunLoop's, each pinned to CF's.
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct CFParityTests {
        /// Ready port and descriptor sources are served by `order`, lowest
        /// first, whatever order epoll reports them in (it reports them in
        /// the order they became ready, here the reverse).
        @Test func RL09_RL18_readySourcesAreServedInAscendingOrder_notInTheKernelsOrder() {
            expectNoDescriptorLeak {
                onFreshThread {
                    let loop = Loop.current
                    let log = EventLog()
                    let late = try! PortSource(ReceiveRight(), order: 10) { _ in log.append("port 10") }
                    let early = try! PortSource(ReceiveRight(), order: -10) { _ in log.append("port -10") }
                    var pipeEnds: [CInt] = [0, 0]
                    #expect(pipe(&pipeEnds) == 0)
                    let readEnd = pipeEnds[0]
                    let middle = try! DescriptorSource(descriptor: readEnd, events: .readable, order: 0) { _ in
                        var byte: UInt8 = 0
                        _ = read(readEnd, &byte, 1)
                        log.append("descriptor 0")
                    }
                    loop.add(late, forMode: .default)
                    loop.add(middle, forMode: .default)
                    loop.add(early, forMode: .default)
                    // Ready in the order 10, 0, -10: epoll reports them so.
                    try! late.makeSendRight().send(Message(id: 1))
                    var byte: UInt8 = 1
                    #expect(write(pipeEnds[1], &byte, 1) == 1)
                    try! early.makeSendRight().send(Message(id: 2))
                    // One non-blocking pass sees all three at once.
                    _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
                    #expect(log.all == ["port -10", "descriptor 0", "port 10"])
                    for source in [late, early] { source.invalidate() }
                    middle.invalidate()
                    close(pipeEnds[0])
                    close(pipeEnds[1])
                }
            }
        }

        /// `CFRunLoopStop` acts only on a running loop, and each run starts
        /// with its own cleared stop flag: a stop sent while idle, or left
        /// over from a run that returned for another reason, ends nothing.
        @Test func RL12_aStopWhileNoRunIsInProgressDoesNothing() {
            onFreshThread {
                let loop = Loop.current
                let source = LoopSource { loop.stop() }
                loop.add(source, forMode: .default)
                loop.stop()
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: false) == .timedOut)
                // A stop inside a run that then returns "handled source" dies with that run.
                source.signal()
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) == .handledSource)
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: false) == .timedOut)
                // A stop ends the innermost run only, not the run around it.
                let log = EventLog()
                loop.add(LoopTimer(after: .milliseconds(1)) { _ in
                    let inner = LoopSource { loop.stop() }
                    loop.add(inner, forMode: "inner")
                    inner.signal()
                    log.append("inner \(loop.run(mode: "inner", timeout: .seconds(5), returnAfterSourceHandled: true))")
                    inner.invalidate()
                }, forMode: .default)
                log.append("outer \(loop.run(mode: .default, timeout: .milliseconds(50), returnAfterSourceHandled: false))")
                #expect(log.all == ["inner handledSource", "outer timedOut"])
                source.invalidate()
            }
        }

        /// `runMode:beforeDate:` is NO only when the mode had nothing to run
        /// when it was called: a mode its one-shot timer emptied still ran.
        @Test func RL06_runModeBeforeIsTrueWhenTheModeEmptiedDuringTheRun() {
            onFreshThread {
                let loop = Loop.current
                let fired = EventLog()
                loop.add(LoopTimer(after: .milliseconds(1)) { _ in fired.append("fired") }, forMode: .default)
                #expect(loop.run(mode: .default, before: .now + .seconds(5)) == true)
                #expect(fired.all == ["fired"])
                // Now it is empty at entry: false, as NSRunLoop says.
                #expect(loop.run(mode: .default, before: .now + .seconds(5)) == false)
            }
        }

        /// CF invalidates a non-repeating observer after its callout returns,
        /// so inside it the observer is still valid.
        @Test func RL10_aNonRepeatingObserverIsValidInsideItsCallout_andInvalidAfter() {
            let seen = onFreshThread { () -> [Bool] in
                let loop = Loop.current
                let seen = HarborLock<[Bool]>([])
                let box = HarborLock<LoopObserver?>(nil)
                let observer = LoopObserver(activities: .beforeTimers, repeats: false) { _ in
                    let me = box.withLock { $0 }
                    seen.withLock { $0.append(me?.isValid ?? false) }
                }
                box.withLock { $0 = observer }
                loop.add(observer, forMode: .default)
                loop.add(LoopSource {}, forMode: .default)
                _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
                _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
                seen.withLock { $0.append(observer.isValid) }
                seen.withLock { $0.append(loop.contains(observer, inMode: .default)) }
                // The callout holds box and box the observer: break the cycle
                // (LeakSanitizer reported the observer, its lock and its callout).
                box.withLock { $0 = nil }
                return seen.withLock { $0 }
            }
            // Called once, valid inside; afterwards invalid and out of the mode.
            #expect(seen == [true, false, false])
        }

        /// CF collects the due timers before its first timer callout: a timer
        /// re-armed to "now" inside its callout fires at the next pass, never
        /// again in the same one; and every timer due when the pass began
        /// fires in it, earliest first, however many there are.
        @Test func RL07_aPassFiresTheTimersDueWhenItBegan_notOnesReArmedDuringIt() {
            let (perPass, order) = onFreshThread { () -> ([Int], [Int]) in
                let loop = Loop.current
                let fires = HarborLock(0)
                let rearming = LoopTimer(after: .zero, repeating: .seconds(60)) { timer in
                    fires.withLock { $0 += 1 }
                    timer.setFireDate(after: .zero)
                }
                loop.add(rearming, forMode: .default)
                var perPass: [Int] = []
                for _ in 0..<3 {
                    usleep(1000)
                    fires.withLock { $0 = 0 }
                    _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
                    perPass.append(fires.withLock { $0 })
                }
                rearming.invalidate()
                // More due timers than one batch of the loop takes: all fire, in date order.
                let order = HarborLock<[Int]>([])
                let base = MonotonicInstant.now.nanoseconds
                for index in (0..<200).reversed() {
                    let timer = LoopTimer(fire: base + Int64(index) * 1000, anchor: nil, interval: nil, tolerance: .zero,
                                          label: "timer \(index)") { _ in order.withLock { $0.append(index) } }
                    loop.add(timer, forMode: .default)
                }
                usleep(2000)
                _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
                return (perPass, order.withLock { $0 })
            }
            #expect(perPass == [1, 1, 1])
            #expect(order == Array(0..<200))
        }

        /// CF marks an observer as firing during its callout and skips it in
        /// a run nested there, so an observer never re-enters itself.
        @Test func RL10_RL13_anObserverIsNotCalledAgainFromARunNestedInItsCallout() {
            let log = onFreshThread { () -> [String] in
                let loop = Loop.current
                let log = EventLog()
                let depth = HarborLock(0)
                loop.add(LoopObserver(activities: .beforeTimers) { _ in
                    let level = depth.withLock { $0 += 1; return $0 }
                    log.append("observer at depth \(level)")
                    if level == 1 {
                        log.append("nested \(loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false))")
                    }
                    depth.withLock { $0 -= 1 }
                }, forMode: .default)
                loop.add(LoopSource {}, forMode: .default)
                _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
                return log.all
            }
            #expect(log == ["observer at depth 1", "nested timedOut"])
        }
    }
}
