// HarborDistributed — the system's thread as the task executor its calls run on.
import Dispatch
import HarborSystem

/// The system's receiving thread as a `TaskExecutor`: each received call
/// runs in a task that prefers it (`Task(executorPreference:)`), so the
/// call's code, and the hosted actor's (a default actor runs on its task's
/// preferred executor), runs on the thread that received the message,
/// without a hand-off to another thread; jobs queued from other threads
/// (a call resumed after it awaited something) wake the thread.
///
/// The thread runs the queued jobs before it waits for the next message:
/// a call holds the thread until it suspends or answers, so other calls,
/// and answers to this system's own calls, wait meanwhile
/// (`Docs/Distributed.md`). After ``stop()`` jobs run on Dispatch's
/// global queue, so no task is left unrun.
final class SystemExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        /// An empty array with room, the last drained batch's: `jobs`'s
        /// next storage, so draining allocates nothing.
        var spare: [UnownedJob] = []
        /// The thread waits for a message with no job queued: a job queued
        /// now must wake it.
        var idle = false
        var stopped = false
    }

    private let queue = HarborLock(Queue())
    /// The system's thread, set as it starts (`runs(on:)`).
    private let thread = HarborLock<SystemThread?>(nil)
    /// Wakes the thread from its wait (a message to its notification port).
    private let wake: @Sendable () -> Void

    init(wake: @escaping @Sendable () -> Void) { self.wake = wake }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (wakeUp, stopped) = queue.withLock { queue -> (Bool, Bool) in
            guard !queue.stopped else { return (false, true) }
            queue.jobs.append(unowned)
            defer { queue.idle = false }
            return (queue.idle, false)
        }
        if stopped {
            let executor = asUnownedTaskExecutor()
            DispatchQueue.global().async { unowned.runSynchronously(on: executor) }
        } else if wakeUp {
            wake()
        }
    }

    /// On the system's thread: runs every queued job, those they queue
    /// included, then marks the thread idle (it is about to wait).
    func runJobs() {
        let executor = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        while true {
            queue.withLock { queue in
                // The drained batch's storage becomes the spare, the spare
                // the queue's: the three arrays take turns.
                swap(&queue.spare, &batch)
                if queue.jobs.isEmpty {
                    queue.idle = true
                } else {
                    swap(&queue.jobs, &batch)
                }
            }
            if batch.isEmpty { return }
            for job in batch { job.runSynchronously(on: executor) }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// On the system's thread, as it starts: the thread jobs run on.
    func runsOnCurrentThread() { thread.withLock { $0 = .current } }

    /// Whether the calling thread is the system's.
    var isCurrent: Bool { thread.withLock { $0?.isCurrent ?? false } }

    /// On the system's thread, after a wait: not idle any more.
    func awake() { queue.withLock { $0.idle = false } }

    /// The thread ends: the jobs still queued, and every later one, run on
    /// Dispatch's global queue.
    func stop() {
        let left = queue.withLock { queue -> [UnownedJob] in
            queue.stopped = true
            defer { queue.jobs = [] }
            return queue.jobs
        }
        let executor = asUnownedTaskExecutor()
        for job in left { DispatchQueue.global().async { job.runSynchronously(on: executor) } }
    }
}
