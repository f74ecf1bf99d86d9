// Harbor — RL16: LoopThread.current, Harbor's [NSThread currentThread].
import Glibc
import HarborPorts
import HarborRunLoop
import HarborTestSupport
import Synchronization
import Testing
import HarborSystem

extension RunLoopTests {
    @Suite struct LoopThreadCurrentTests {
        @Test func RL16_aLoopThreadSeesItselfAsCurrentAndNoOtherThreadDoes() {
            let seen = HarborLock<[String]>([])
            let first = LoopThread(name: "first") {
                let current = LoopThread.current
                seen.withLock { $0.append("first sees \(current?.name ?? "nil"), its loop \(current?.loop === Loop.current)") }
            }
            let second = LoopThread(name: "second") {
                seen.withLock { $0.append("second sees \(LoopThread.current?.name ?? "nil")") }
            }
            first.start()
            first.join()
            second.start()
            second.join()
            #expect(seen.withLock { $0 } == ["first sees first, its loop true", "second sees second"])
            #expect(LoopThread.current == nil, "the test's own thread is no LoopThread")
            let worker = LoopWorker(name: "worker")
            let onWorker = Atomic(true)
            try? worker.performAndWait { onWorker.store(LoopThread.current != nil, ordering: .relaxed) }
            worker.stop()
            let workerHadOne = onWorker.load(ordering: .relaxed)
            #expect(!workerHadOne, "a LoopWorker has no LoopThread")
        }

        /// The object stays valid inside the body even when its creator let
        /// go of it before the thread ran.
        @Test func RL16_theCurrentLoopThreadOutlivesItsCreatorsReference() {
            let name = HarborLock<String?>(nil)
            let done = Gate()
            do {
                let thread = LoopThread(name: "orphan") {
                    Glibc.usleep(50_000)  // the creator's reference is gone by now
                    name.withLock { $0 = LoopThread.current?.name }
                    done.open()
                }
                thread.start()
            }
            done.wait()
            #expect(name.withLock { $0 } == "orphan")
        }
    }
}
