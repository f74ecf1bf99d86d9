// Harbor — a serial executor backed by a run loop: actors whose code runs on a loop's thread (A02).

/// A `SerialExecutor` that runs jobs on a run loop's thread, as blocks
/// posted to the loop's common modes. An actor using it has its isolated
/// code run on that thread, interleaved in order with the loop's other
/// work (port messages, timers, sources), so state confined to a loop
/// thread is safe under strict concurrency:
///
/// ```swift
/// actor Session {
///     let executor: LoopExecutor
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
///     init(on worker: LoopWorker) { executor = LoopExecutor(loop: worker.loop) }
/// }
/// ```
///
/// For an actor whose state the loop's own handlers (port messages,
/// timers, sources) should reach synchronously, adopt ``LoopActor`` and
/// make the handlers with its `confined` methods.
///
/// Jobs run only while the loop runs in a common mode (a ``LoopWorker``
/// runs `.default`, which is common). Jobs posted after the loop's thread
/// has exited are dropped, and whatever awaited them waits forever: stop a
/// worker only after its actors are done.
///
/// **Cost:** per job, what ``Loop/perform(_:)`` costs: one allocation, one
/// lock and, if the loop sleeps, one eventfd write.
/// **Thread safety:** any thread may enqueue.
/// **Darwin equivalent:** none built in; the main actor's executor is the
/// main queue drained by the main run loop (see RL14, A03), and this is
/// the same for any loop.
public final class LoopExecutor: SerialExecutor {
    /// The loop whose thread runs the jobs.
    public let loop: Loop

    /// An executor running jobs on `loop`'s thread.
    public init(loop: Loop) { self.loop = loop }

    /// Posts the job to the loop (common modes) and wakes it if it sleeps.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        loop.perform { unowned.runSynchronously(on: executor) }
    }

    /// This executor as the runtime refers to it.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Whether the calling thread is the loop's: `assumeIsolated` and
    /// `preconditionIsolated` use it.
    public func isIsolatingCurrentContext() -> Bool? { loop.isCurrent }

    /// Traps unless called on the loop's thread (`assumeIsolated` misuse).
    public func checkIsolated() {
        precondition(loop.isCurrent, "Harbor: expected to run on the thread of loop \(loop.threadID)")
    }
}
