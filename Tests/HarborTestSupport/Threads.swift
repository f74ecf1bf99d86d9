// Harbor — test support: running work on another thread and waiting for it.
import Dispatch
import Glibc
import HarborPorts

/// Runs `body` on a new POSIX thread; `join()` waits for the thread to exit
/// and returns the body's result.
///
/// A real thread, joined, rather than a Dispatch worker: by the time `join()`
/// returns, the body and everything it captured have been released, so a
/// descriptor-leak check that follows sees no late closes or stray loops.
public final class TestThread<Result: Sendable>: ThreadEntry, @unchecked Sendable {
    // @unchecked: `body` is taken once by the thread; `result` is written by
    // the thread before `done` is signalled and read only after that.
    private var body: (@Sendable () -> Result)?
    private var result: Result?
    private let done = DispatchSemaphore(value: 0)
    private let joined = HarborLock(false)
    private var thread = pthread_t()

    public init(_ body: @escaping @Sendable () -> Result) {
        self.body = body
        super.init()
        let context = Unmanaged<ThreadEntry>.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            Unmanaged<ThreadEntry>.fromOpaque(context!).takeRetainedValue().runBody()
            return nil
        }, context)
        precondition(created == 0, "pthread_create failed")
    }

    override func runBody() {
        let body = self.body.take()!
        result = body()
        done.signal()
    }

    /// Waits for the thread to exit and returns what its body returned.
    public func join() -> Result {
        let needsJoin = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if needsJoin { pthread_join(thread, nil) }
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

/// The non-generic entry point a C thread function can call.
public class ThreadEntry: @unchecked Sendable {
    // @unchecked: no state of its own.
    func runBody() {}
}

/// A thread-safe log of events, for asserting the order things happened in.
public final class EventLog: Sendable {
    private let entries = HarborLock<[String]>([])
    public init() {}
    public func record(_ entry: String) { entries.withLock { $0.append(entry) } }
    public var all: [String] { entries.withLock { $0 } }
}
