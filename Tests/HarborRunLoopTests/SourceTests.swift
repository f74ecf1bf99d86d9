// Harbor — version-0 sources and port sources.
import Glibc
import HarborPorts
@testable import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct SourceTests {
        @Test func RL08_signalIsNoticedAtTheNextPass_aSleepingLoopNeedsWakeUp() {
            let worker = LoopWorker(name: "rl08")
            let ran = Gate()
            let log = EventLog()
            let source = LoopSource { log.append("ran"); ran.open() }
            worker.loop.add(source, forMode: .default)
            // Wait until the worker sleeps for good, then signal without waking
            // it. "For good": a wake-up posted before the loop's first sleep
            // (the one below, if the worker had not slept yet) makes it pass
            // once more, so the loop must be waiting with no pass for 20 ms.
            let sleeps = EventLog()
            worker.loop.add(LoopObserver(activities: .beforeWaiting, repeats: true) { _ in
                sleeps.append("sleep")
            }, forMode: .default)
            worker.loop.wakeUp()
            var settled = false
            while !settled {
                while !worker.loop.isWaiting || sleeps.all.isEmpty { sched_yield() }
                let seen = sleeps.all.count
                usleep(20_000)
                settled = worker.loop.isWaiting && sleeps.all.count == seen
            }
            source.signal()
            #expect(source.isSignalled)
            // Nobody woke it: it sleeps on, the source pending, until someone does.
            usleep(50_000)
            #expect(log.all.isEmpty, "a signal alone woke the sleeping loop")
            #expect(worker.loop.isWaiting && source.isSignalled)
            worker.loop.wakeUp()
            ran.wait()
            #expect(log.all == ["ran"])
            #expect(!source.isSignalled)
            worker.stop()
        }

        /// CF moves a source whose loop has gone: added to another loop, it
        /// is served there, whether its loop stopped with its worker or its
        /// thread exited.
        @Test func RL09_aPortSourceWhoseLoopIsGoneIsServedByTheNextLoop() throws {
            let log = EventLog()
            let port = try PortSource(ReceiveRight()) { message in log.append("got \(message.id)") }
            let worker = LoopWorker(name: "rl09-gone")
            worker.loop.add(port, forMode: .default)
            worker.stop()
            for id: Int32 in [1, 2] {
                // The first round's loop is the stopped worker's; the second's,
                // the first round's thread, which has exited.
                let result = onFreshThread { () -> LoopRunResult in
                    let loop = Loop.current
                    loop.add(port, forMode: .default)
                    #expect(loop.contains(port, inMode: .default))
                    #expect((try? port.makeSendRight().send(Message(id: id))) != nil)
                    return loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true)
                }
                #expect(result == .handledSource, "\(port)")
            }
            #expect(log.all == ["got 1", "got 2"])
        }

        /// CF keeps a version-0 or port source in every loop it was added to
        /// (only timers and observers are in one loop): each loop serves it,
        /// removing it from one leaves it in the others, and invalidating it
        /// takes it out of all of them.
        @Test func RL03_RL08_RL09_aSourceIsInEveryLoopItWasAddedTo() throws {
            let worker = LoopWorker(name: "rl09-two-loops")
            let servedBy = EventLog()
            let port = try PortSource(ReceiveRight()) { message in
                servedBy.append("\(message.id) \(Loop.current === worker.loop ? "worker" : "other")")
            }
            let signalled = Gate()
            let source = LoopSource { signalled.open() }
            worker.loop.add(port, forMode: .default)
            worker.loop.add(source, forMode: .default)
            onFreshThread {
                let loop = Loop.current
                loop.add(port, forMode: .common)
                loop.add(source, forMode: .default)
                #expect(loop.contains(port, inMode: .default) && loop.contains(source, inMode: .default))
                #expect(worker.loop.contains(port, inMode: .default) && worker.loop.contains(source, inMode: .default))
                // While this loop does not run, the worker serves the port.
                #expect((try? port.makeSendRight().send(Message(id: 1))) != nil)
                let deadline = ContinuousClock.now + .seconds(5)
                while servedBy.all.isEmpty && ContinuousClock.now < deadline { usleep(1000) }
                #expect(servedBy.all == ["1 worker"])
                // Out of the worker's loop, still in this one, which serves it.
                worker.loop.remove(port, forMode: .default)
                #expect(!worker.loop.contains(port, inMode: .default) && loop.contains(port, inMode: .default))
                #expect((try? port.makeSendRight().send(Message(id: 2))) != nil)
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) == .handledSource)
                #expect(servedBy.all == ["1 worker", "2 other"])
                // A signal wakes every loop the source is in; one of them runs it.
                source.signalAndWakeUp()
                if loop.contains(source, inMode: .default) {
                    _ = loop.run(mode: .default, timeout: .milliseconds(1), returnAfterSourceHandled: true)
                }
                signalled.wait()
                port.invalidate()
                source.invalidate()
                #expect(!loop.contains(port, inMode: .default) && !loop.contains(port, inMode: .common))
                #expect(!loop.contains(source, inMode: .default) && !worker.loop.contains(source, inMode: .default))
            }
            worker.stop()
        }

        @Test func RL08_pendingSourcesRunInAscendingOrder_andCountAsHandled() {
            onFreshThread {
                let loop = Loop.current
                let log = EventLog()
                let sources = [5, -3, 0, 9, -3].enumerated().map { index, order in
                    LoopSource(order: order) { log.append("\(order)/\(index)") }
                }
                for source in sources { loop.add(source, forMode: .default) }
                for source in sources { source.signal() }
                #expect(loop.run(mode: .default, timeout: .milliseconds(10), returnAfterSourceHandled: false) == .timedOut)
                #expect(log.all == ["-3/1", "-3/4", "0/2", "5/0", "9/3"])
                sources[0].signalAndWakeUp()
                #expect(loop.run(mode: .default, timeout: .seconds(5), returnAfterSourceHandled: true) == .handledSource)
            }
        }

        @Test func RL09_portSourceWakesTheLoopAndHandsTheHandlerTheMessage() throws {
            try expectNoDescriptorLeak {
                let received = EventLog()
                let gotIt = Gate()
                let worker = LoopWorker(name: "rl09")
                let port = try PortSource(ReceiveRight()) { message in
                    received.append("\(message.id):\(message.text)")
                    gotIt.open()
                }
                let send = port.makeSendRight()
                worker.loop.add(port, forMode: .default)
                try send.send(Message(id: 7, text: "hello"))
                gotIt.wait()
                #expect(received.all == ["7:hello"])
                port.invalidate()
                worker.stop()
            }
        }

        @Test func RL09_receivingAMessageIsHandledSource_andEndsRunModeBefore() throws {
            let port = try PortSource(ReceiveRight()) { _ in }
            let send = port.makeSendRight()
            let sender = SystemThread.start { try? send.send(Message(id: 1, text: "x")) }
            let result = onFreshThread { () -> Bool in
                let loop = Loop.current
                loop.add(port, forMode: .default)
                return loop.run(mode: .default, before: .now + .seconds(10))
            }
            sender.join()
            #expect(result)
            #expect(port.isValid)
            let (status, dead) = (port.description, port.membership.withLock { $0.loops.isEmpty })
            #expect(dead, "\(status)")  // its loop is gone with its thread
        }

        @Test func RL09_aPortInAModeKeepsAWorkerAlive_andAStaleEventIsDropped() throws {
            onFreshThread {
                let loop = Loop.current
                let port = try! PortSource(ReceiveRight()) { _ in }
                loop.add(port, forMode: .default)
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: false) == .timedOut)
                let token = port.membership.withLock { $0.membership(in: loop).token }!
                port.invalidate()
                #expect(loop.state.withLock { $0.waitSlots.lookup(token) } == nil)
                #expect(loop.run(mode: .default, timeout: .milliseconds(20), returnAfterSourceHandled: false) == .finished)
            }
        }
    }
}

