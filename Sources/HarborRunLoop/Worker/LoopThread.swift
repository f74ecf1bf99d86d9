// Harbor — a thread as the target of performs (performSelector:onThread:), reachable before it runs its loop.
import HarborPorts
import Synchronization
import HarborSystem

/// A thread that other threads can perform work on, before it starts and
/// while it runs: the role `NSThread` plays as the target of
/// `performSelector:onThread:withObject:waitUntilDone:`.
///
/// Its ``loop`` exists from creation and becomes the thread's
/// `Loop.current` when it starts (as CF makes a thread's run loop for
/// whoever asks first, from any thread), so work performed on the thread
/// waits in that loop for the thread to run it. As on Darwin, a pending
/// perform is work in its modes: a thread whose body only runs its loop
/// runs the perform instead of returning at once, and its loop returns once
/// nothing is left (add a source or a port to keep it alive for good, the
/// `addPort:forMode:` idiom, or use ``LoopWorker``, which does that and
/// can be stopped).
///
/// ```swift
/// let thread = LoopThread(name: "net") { Loop.current.run() }  // [[NSThread alloc] initWithBlock:]
/// thread.perform { connect() }     // performSelector:onThread:withObject:waitUntilDone:NO
/// thread.start()                   // [thread start]
/// thread.join()
/// ```
///
/// **Cost:** one thread once started; its loop's descriptors from creation
/// (an eventfd, and an epoll set and a timerfd per mode).
/// **Thread safety:** every method, any thread.
/// **CF equivalent:** `NSThread` with `performSelector:onThread:…`; the loop
/// is `_CFRunLoopGet0(thread)`.
public final class LoopThread: Sendable {
    /// The thread's name, for logs and descriptions.
    public let name: String
    /// The thread's loop, from creation on; the thread's `Loop.current` once it runs.
    public let loop: Loop
    private let main: HarborLock<(@Sendable () -> Void)?>
    private let handle = HarborLock<SystemThread?>(nil)
    private let progress = ThreadProgress()

    /// A thread, not started yet, that will run `main` (which typically runs
    /// `Loop.current`, this thread's ``loop``).
    /// **CF equivalent:** `-[NSThread initWithBlock:]`.
    public init(name: String = "harbor.thread", _ main: @escaping @Sendable () -> Void) {
        self.name = name
        loop = Loop(owner: nil, threadID: 0, isMain: false)
        self.main = HarborLock(main)
    }

    /// Starts the thread. Calling it again does nothing (NSThread raises).
    /// **CF equivalent:** `-[NSThread start]`.
    public func start() {
        guard let main = main.withLock({ $0.take() }) else { return }
        let loop = self.loop
        let progress = self.progress
        // The closure holds `self` while the body runs, which keeps the
        // object `LoopThread.current` points at alive until then.
        let thread = SystemThread.start { [self] in
            Loop.adopt(loop)
            LoopThread.setCurrent(self)
            progress.state.store(ThreadProgress.executing, ordering: .releasing)
            main()
            progress.state.store(ThreadProgress.finished, ordering: .releasing)
            LoopThread.setCurrent(nil)
            // The loop is torn down when the thread exits (RL01), which fails
            // any performAndWait still waiting for it.
        }
        handle.withLock { $0 = thread }
    }

    /// Whether the thread runs its body now. **CF equivalent:** `-[NSThread isExecuting]`.
    public var isExecuting: Bool { progress.state.load(ordering: .acquiring) == ThreadProgress.executing }

    /// Whether the thread's body has returned. **CF equivalent:** `-[NSThread isFinished]`.
    public var isFinished: Bool { progress.state.load(ordering: .acquiring) == ThreadProgress.finished }

    /// Queues `block` for the thread's loop in `modes` (common by default)
    /// and wakes it if it sleeps; before ``start()``, the block waits for the
    /// thread to run its loop. A pending block keeps the loop's mode from
    /// being empty, and running it counts as "handled source".
    /// **CF equivalent:** `performSelector:onThread:withObject:waitUntilDone:NO`
    /// (`…modes:` with `modes`).
    public func perform(inModes modes: [LoopMode] = [.common], _ block: @escaping @Sendable () -> Void) {
        loop.perform(inModes: modes, block)
    }

    /// Runs `block` on the thread and returns once it ran: inline when called
    /// on the thread itself, otherwise queued for `modes` while the caller
    /// waits (also for the thread to start, if it has not).
    /// - Throws: ``LoopError/Code/loopTerminated`` if the thread ends (or this
    ///   object goes away unstarted) before the block could run.
    /// **CF equivalent:** `performSelector:onThread:withObject:waitUntilDone:YES`.
    public func performAndWait(
        inModes modes: [LoopMode] = [.common], _ block: @escaping @Sendable () -> Void
    ) throws(LoopError) {
        try loop.performAndWait(inModes: modes, block)
    }

    /// Waits until the thread has exited and its loop is torn down. Returns
    /// at once if the thread was never started, was joined already, or is
    /// the calling thread. (NSThread has no join; tests and shutdowns need one.)
    public func join() {
        guard let thread = handle.withLock({ $0.take() }), !thread.isCurrent else { return }
        thread.join()
    }

    deinit {
        if let thread = handle.withLock({ $0.take() }) {
            thread.detach()  // still running or not yet joined: let it end alone
        } else if main.withLock({ $0 != nil }) {
            loop.terminate()  // never started: release its descriptors, fail its waiters
        }
    }
}

/// How far a ``LoopThread`` got, shared with the thread itself.
private final class ThreadProgress: Sendable {
    static let notStarted: UInt8 = 0
    static let executing: UInt8 = 1
    static let finished: UInt8 = 2
    let state = Atomic<UInt8>(notStarted)
}
