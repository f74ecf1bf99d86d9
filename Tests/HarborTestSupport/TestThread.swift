// Harbor — test support: a thread whose result is joined.
import Dispatch
import HarborPorts
import HarborSystem

/// Runs `body` on a new POSIX thread; `join()` waits for the thread to exit
/// and returns the body's result.
///
/// A real thread, joined, rather than a Dispatch worker: by the time `join()`
/// returns, the body and everything it captured have been released, so a
/// descriptor-leak check that follows sees no late closes or stray loops.
public final class TestThread<Result: Sendable>: @unchecked Sendable {
    // @unchecked: `result` is written by the thread before `done` is
    // signalled and read only after that (or after the join).
    private var result: Result?
    private let done = DispatchSemaphore(value: 0)
    private let joined = HarborLock(false)
    private var thread: SystemThread?

    public init(_ body: @escaping @Sendable () -> Result) {
        thread = SystemThread.start { [self] in
            result = body()
            done.signal()
        }
    }

    /// Waits for the thread to exit and returns what its body returned.
    public func join() -> Result {
        let needsJoin = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if needsJoin { thread?.join() }
        return result!
    }

    /// Whether the body has finished within `seconds`.
    public func isDone(within seconds: Double) -> Bool {
        if done.wait(timeout: .now() + seconds) == .success {
            done.signal()
            return true
        }
        return false
    }
}
