// Harbor — one long-lived thread that runs the server side of each variant in turn.
//
// Every thread-based variant (the floor, Harbor, Foundation's run loop and
// NSCondition) runs its server on this same thread and its client on the
// main thread, so all of them share one pair of threads and whatever CPU
// placement and wake-up cost the scheduler gave this process run.
import Dispatch
import Glibc
import HarborPorts
import Synchronization
import HarborSystem

final class HarnessThread: Sendable {
    private let pending = HarborLock<(@Sendable () -> Void)?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let jobReady = DispatchSemaphore(value: 0)
    private let jobDone = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    /// Starts the thread (a plain pthread, so no runtime of ours sits under the floor).
    init(name: String) throws {
        do {
            try SystemThread.spawn { [self] in loop() }.detach()
        } catch {
            throw BenchmarkFailure("pthread_create failed: \(error)")
        }
    }

    private func loop() {
        while true {
            jobReady.wait()
            if stopping.load(ordering: .acquiring) { break }
            let job = pending.withLock { $0.take() }
            job?()
            jobDone.signal()
        }
        exited.signal()
    }

    /// Hands `job` to the thread; returns at once. Pair with `waitUntilIdle`.
    func start(_ job: @escaping @Sendable () -> Void) {
        pending.withLock { $0 = job }
        jobReady.signal()
    }

    /// Waits for the job handed over by `start` to return.
    func waitUntilIdle() { jobDone.wait() }

    /// Ends the thread after its current job.
    func shutDown() {
        stopping.store(true, ordering: .releasing)
        jobReady.signal()
        exited.wait()
    }
}

/// A `HarnessThread` shared by several variants, shut down when the last
/// variant holding it is released.
final class SharedServerThread: Sendable {
    let thread: HarnessThread
    init(name: String) throws { thread = try HarnessThread(name: name) }
    deinit { thread.shutDown() }
}

/// Ends the process when a variant's server side hits an error it cannot
/// report to the client (the client would otherwise wait forever).
func abortBenchmark(_ message: String) -> Never {
    progress("harbor-bench: \(message)")
    exit(1)
}
