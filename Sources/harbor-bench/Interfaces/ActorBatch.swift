// Harbor — an async call's measure: its calls timed in one task, handed to the waiting thread.
import Dispatch

/// One measure's samples, written by its task and read after the task signalled.
final class ActorBatch: @unchecked Sendable {
    // @unchecked: written by one task, read by the waiting thread after the semaphore.
    var samples: [Int64] = []
    var failure: (any Error)?

    /// Runs `call(index)` `warmUp + iterations` times in one task (that
    /// prefers `executor`, if given), timing each; this thread waits for
    /// the task, then appends the timed samples past the warm-up.
    static func measure(iterations: Int, warmUp: Int, executor: (any TaskExecutor)? = nil,
                        into samples: inout [Int64], _ call: @escaping @Sendable (Int) async throws -> Void) throws {
        let batch = ActorBatch()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            do {
                for index in 0..<(warmUp + iterations) {
                    let started = nowNanoseconds()
                    try await call(index)
                    let elapsed = nowNanoseconds() - started
                    if index >= warmUp { batch.samples.append(elapsed) }
                }
            } catch {
                batch.failure = error
            }
            done.signal()
        }
        done.wait()
        if let failure = batch.failure { throw failure }
        samples.append(contentsOf: batch.samples)
    }
}
