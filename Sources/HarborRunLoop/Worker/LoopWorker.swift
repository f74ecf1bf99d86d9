// Harbor — a worker thread that runs a loop until told to stop, for real.
import HarborPorts
import Synchronization
import HarborSystem

/// A thread of its own whose loop is kept alive and accepts work, and which
/// ends for real on ``stop()``: its loop returns, the thread exits, and the
/// loop's descriptors and items are released.
///
/// The seeds' "permanent thread" idiom — `addPort:forMode:` and `[runLoop
/// run]` — can never be stopped; this one can. The loop is kept alive by a
/// version-0 source in `.default` that is never signalled.
///
/// ```swift
/// let worker = LoopWorker(name: "net")
/// worker.loop.add(portSource, forMode: .default)
/// worker.perform { … }          // runs on the worker
/// worker.stop()                 // joins the thread
/// ```
///
/// **Cost:** one thread; its loop's descriptors (an eventfd, and an epoll set
/// and a timerfd per mode).
/// **Thread safety:** every method, any thread.
public final class LoopWorker: Sendable {
    /// The worker's loop: add sources, timers and observers to it from any thread.
    public let loop: Loop
    /// The worker's name, for logs and descriptions; also its thread's name
    /// (its first 15 bytes: what `top -H`, `ps -L` and `perf` show).
    public let name: String
    private let thread: HarborLock<SystemThread?>
    private let stopping = StopFlag()
    private let keepAlive = LoopSource(order: .max, label: "LoopWorker keep-alive") {}

    /// Starts the thread and returns once its loop exists.
    public init(name: String = "harbor.loop") {
        self.name = name
        let handOff = HandOff()
        let stopping = self.stopping
        let keepAlive = self.keepAlive
        let handle = SystemThread.start {
            SystemThread.nameCurrent(name)
            let loop = Loop.current
            loop.add(keepAlive, forMode: .default)
            handOff.deliver(loop)
            while !stopping.value.load(ordering: .acquiring) {
                if loop.run(mode: .default, timeout: nil, returnAfterSourceHandled: false) == .finished { break }
            }
        }
        thread = HarborLock(handle)
        loop = handOff.wait()
    }

    /// Queues `block` on the worker (in its common modes) and wakes it.
    /// Work posted after ``stop()`` never runs.
    /// **CF equivalent:** `performSelector:onThread:withObject:waitUntilDone:NO`.
    public func perform(_ block: @escaping @Sendable () -> Void) { loop.perform(block) }

    /// Runs `block` on the worker and waits for it.
    /// - Throws: ``LoopError/Code/loopTerminated`` after ``stop()``.
    public func performAndWait(_ block: @escaping @Sendable () -> Void) throws(LoopError) {
        try loop.performAndWait(block)
    }

    /// Whether ``stop()`` has been called.
    public var isStopped: Bool { stopping.value.load(ordering: .acquiring) }

    /// Ends the worker: its loop returns, the thread exits and everything the
    /// loop held is released. Waits for the thread, unless called on the
    /// worker itself (then it only tells it to finish). Idempotent.
    public func stop() {
        guard !stopping.value.exchange(true, ordering: .acquiringAndReleasing) else { return }
        keepAlive.invalidate()
        // A stop reaches only a running pass (as CFRunLoopStop does), and the
        // worker may be between two: post one as well, which its next pass runs.
        loop.stop()
        let loop = self.loop
        loop.perform(inModes: [.default]) { loop.stop() }
        guard let handle = thread.withLock({ $0.take() }) else { return }
        if handle.isCurrent {
            handle.detach()
        } else {
            handle.join()
        }
    }

    deinit { stop() }
}

/// ``LoopWorker``'s name before the run-loop types were all named `Loop…`:
/// code written against it still compiles, with a warning naming the new one.
@available(*, deprecated, renamed: "LoopWorker")
public typealias RunLoopThread = LoopWorker

/// Shared between the worker and whoever stops it.
private final class StopFlag: Sendable {
    let value = Atomic(false)
}

/// Hands the new thread's loop to the thread that started it.
private final class HandOff: Sendable {
    private let loop = HarborLock<Loop?>(nil)
    private let parker = Parker()
    func deliver(_ made: Loop) {
        loop.withLock { $0 = made }
        parker.unpark()
    }
    func wait() -> Loop {
        while true {
            if let made = loop.withLock({ $0 }) { return made }
            _ = parker.park(until: .never)
        }
    }
}
