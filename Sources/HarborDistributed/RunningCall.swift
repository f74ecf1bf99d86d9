// HarborDistributed — the serving side's handle on one running call.
import HarborSystem

/// A received call's task, as its system keeps it while the call runs, so
/// a cancel from its caller (D11) can cancel it. A cancel that comes
/// before the task is known is kept and applied when it is.
final class RunningCall: Sendable {
    private struct Handle {
        var task: Task<Void, Never>?
        var cancelled = false
    }

    private let handle = HarborLock(Handle())

    /// The task running the call.
    func started(_ task: Task<Void, Never>) {
        if handle.withLock({ $0.task = task; return $0.cancelled }) { task.cancel() }
    }

    /// Cancels the call's task (now, or as soon as it is known).
    func cancel() {
        handle.withLock { $0.cancelled = true; return $0.task }?.cancel()
    }
}
