// Harbor — the loop's print-out, the worker thread, and the wrong-thread trap.
import Dispatch
import HarborPorts
import HarborRunLoop
import HarborSystem
import HarborTestSupport
import Testing

extension RunLoopTests {
    @Suite struct DescriptionAndWorkerTests {
        @Test func RL15_descriptionListsCommonModesAndEachModesItems() throws {
            let port = try PortSource(ReceiveRight()) { _ in }
            let text = onFreshThread { () -> String in
                let loop = Loop.current
                loop.addCommonMode("tracking")
                loop.add(LoopSource(order: 3, label: "wake-source") {}, forMode: .default)
                loop.add(port, forMode: "tracking")
                loop.add(LoopTimer(after: .seconds(30), repeating: .seconds(2), label: "heartbeat") { _ in }, forMode: .common)
                loop.add(LoopObserver(activities: [.beforeWaiting, .exit], order: 7) { _ in }, forMode: .default)
                return loop.description
            }
            #expect(text.contains("common modes: [default, tracking]"))
            #expect(text.contains("default (common) {"))
            #expect(text.contains("tracking (common) {"))
            #expect(text.contains("LoopSource(wake-source, order: 3"))
            #expect(text.contains("PortSource(\(port.portName)"))
            #expect(text.ranges(of: "LoopTimer(heartbeat, next fire in").count == 2)  // in both modes
            #expect(text.contains("activities: [beforeWaiting, exit], order: 7"))
        }

        @Test func RL17_workerAcceptsWork_andStopEndsTheThreadAndReleasesEverything() throws {
            try expectNoDescriptorLeak {
                let worker = LoopWorker(name: "rl17")
                let log = EventLog()
                let handled = DispatchSemaphore(value: 0)
                let port = try PortSource(ReceiveRight()) { message in
                    log.append("message \(message.id)")
                    handled.signal()
                }
                let send = port.makeSendRight()
                worker.loop.add(port, forMode: .default)
                worker.loop.add(LoopTimer(after: .seconds(60)) { _ in }, forMode: "tracking")
                try send.send(Message(id: 3))
                try worker.performAndWait { log.append("block") }
                // Both kinds of work were accepted: the posted block and the port's message.
                #expect(handled.wait(timeout: .now() + 10) == .success, "the worker never handled the message")
                #expect(Set(log.all) == ["block", "message 3"])
                worker.stop()
                #expect(worker.isStopped)
                #expect(worker.loop.isTerminated)  // the thread exited and tore its loop down
                #expect(throws: LoopError.self) { try worker.performAndWait {} }
            }
        }

        /// RL17: the worker's thread carries the worker's name (its first
        /// 15 bytes, whole characters), not the name of whichever thread
        /// started it, so `top -H` and `perf` tell a daemon's loop apart.
        @Test func RL17_theWorkersThreadCarriesItsName() throws {
            for (name, shown) in [("rl17-named", "rl17-named"), ("rl17-a-much-longer-name", "rl17-a-much-lon"),
                                  ("rl17-ééééééé", "rl17-ééééé")] {
                let worker = LoopWorker(name: name)
                let seen = EventLog()
                try worker.performAndWait {
                    let comm = (try? FileSystem.contents(of: "/proc/thread-self/comm")) ?? []
                    seen.append(String(decoding: comm.prefix { $0 != 0x0A }, as: UTF8.self))
                }
                worker.stop()
                #expect(seen.all == [shown], "worker \(name)")
            }
        }

        // Code written against the old name still compiles and gets the same
        // type. The test is deprecated itself so that naming the deprecated
        // alias does not warn (the build is warning-free).
        @available(*, deprecated, message: "names RunLoopThread on purpose")
        @Test func RL17_theOldNameRunLoopThreadIsLoopWorker() throws {
            #expect(ObjectIdentifier(RunLoopThread.self) == ObjectIdentifier(LoopWorker.self))
            let worker = RunLoopThread(name: "rl17-old-name")
            let ran = EventLog()
            try worker.performAndWait { ran.append("ran") }
            worker.stop()
            #expect(ran.all == ["ran"])
        }

        @Test func RL06_RL16_runningAnotherThreadsLoopTraps() async {
            await #expect(processExitsWith: .failure) {
                let loop = onFreshThread { Loop.current }
                _ = loop.run(mode: .default, timeout: .zero, returnAfterSourceHandled: false)
            }
        }
    }
}
