// Harbor — test support: running work on another thread and waiting for it.
import Dispatch
import Synchronization

/// Runs `body` on a new thread; `join()` waits for it and returns its result.
public final class TestThread<Result: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Result?>(nil)

    public init(_ body: @escaping @Sendable () -> Result) {
        DispatchQueue.global().async { self.finish(body()) }
    }

    private func finish(_ value: Result) {
        result.withLock { $0 = value }
        done.signal()
    }

    /// Waits for the thread's body to finish and returns what it returned.
    public func join() -> Result {
        done.wait()
        return result.withLock { $0! }
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

/// A thread-safe log of events, for asserting the order things happened in.
public final class EventLog: Sendable {
    private let entries = Mutex<[String]>([])
    public init() {}
    public func record(_ entry: String) { entries.withLock { $0.append(entry) } }
    public var all: [String] { entries.withLock { $0 } }
}
