// Harbor — test support: running work on another thread and waiting for it.
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

/// Runs `body` on a brand-new thread and returns its result after the thread
/// has exited (so its Harbor loop, if it made one, is already torn down).
public func onFreshThread<T>(_ body: @escaping () -> T) -> T {
    let box = FreshThreadBox(body)
    SystemThread.start { box.run() }.join()
    return box.result!
}

/// A body and its result, carried to a fresh thread and back.
private final class FreshThreadBox<T>: @unchecked Sendable {
    // @unchecked: the thread runs `body` and writes `result` before it
    // exits; the caller reads `result` only after joining it.
    var body: (() -> T)?
    var result: T?
    init(_ body: @escaping () -> T) { self.body = body }
    func run() {
        result = body?()
        body = nil
    }
}

/// A thread-safe log of events, for asserting the order things happened in.
public final class EventLog: Sendable {
    private let entries = HarborLock<[String]>([])
    public init() {}
    public func record(_ entry: String) { entries.withLock { $0.append(entry) } }
    public var all: [String] { entries.withLock { $0 } }
}
