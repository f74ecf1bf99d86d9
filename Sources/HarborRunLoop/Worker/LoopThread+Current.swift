// Harbor — the LoopThread running the calling code: [NSThread currentThread] for Harbor's threads.
import HarborPorts
import HarborSystem

extension LoopThread {
    /// The ``LoopThread`` whose body runs on the calling thread, or `nil` on
    /// any other thread (the main thread, a ``LoopWorker``, Dispatch's
    /// threads, a thread started some other way).
    ///
    /// ```swift
    /// let name = LoopThread.current?.name ?? "main"   // [NSThread currentThread].name
    /// ```
    ///
    /// Unlike `[NSThread currentThread]`, it makes no object for a thread
    /// that has none: only threads started as a `LoopThread` have one.
    /// **Cost:** one `pthread_getspecific`.
    /// **CF equivalent:** `+[NSThread currentThread]`.
    public static var current: LoopThread? {
        currentThreadKey.value.map { Unmanaged<LoopThread>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Records `thread` as the calling thread's `LoopThread`, unretained:
    /// the thread's start closure holds it while its body runs, and clears
    /// it before letting go.
    static func setCurrent(_ thread: LoopThread?) {
        currentThreadKey.set(thread.map { Unmanaged.passUnretained($0).toOpaque() })
    }
}

/// Each thread's running ``LoopThread``; nothing to release on exit (the
/// pointer is unretained and already cleared when the body returned).
private let currentThreadKey = ThreadLocalKey { _ in }
