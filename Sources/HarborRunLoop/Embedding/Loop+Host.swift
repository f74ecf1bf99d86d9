// Harbor — the public embedding API (RL21): another event loop drives a Harbor loop through one descriptor.
//
// Built on the package hooks in Loop+EmbeddingHooks.swift (the ones sd-event
// nesting uses); this file only gives them their public, general form.
import HarborPorts

extension Loop {
    /// The one descriptor a foreign event loop (GLib, libuv, SwiftNIO, a
    /// hand-written `poll`, sd-event) watches to drive this loop's `mode`
    /// on this loop's thread: it polls readable whenever something in the
    /// mode is ready — a port message, a descriptor, a posted block or
    /// wake-up, a timer once ``prepareForForeignWait(in:)`` armed it.
    ///
    /// The driving protocol, all on the loop's own thread:
    /// ```swift
    /// let fd = loop.foreignWaitDescriptor(in: .default)!
    /// while running {
    ///     let mayWait = loop.prepareForForeignWait(in: .default)
    ///     poll([fd, …], timeout: mayWait ? -1 : 0)   // the foreign loop's sleep
    ///     loop.runReady(in: .default)                // what is ready runs
    /// }
    /// ```
    /// The descriptor is the mode's epoll set and belongs to the loop:
    /// never close it or read from it. `nil` for `.common` or a loop whose
    /// thread has exited. Any thread.
    /// **CF equivalent:** none public; CF's own port set per mode, which
    /// GLib-on-Darwin integrations reach through private API.
    public func foreignWaitDescriptor(in mode: LoopMode = .default) -> CInt? {
        waitsetDescriptor(for: mode)
    }

    /// Call just before the foreign loop sleeps: arms the mode's timerfd to
    /// its earliest timer (so a due timer makes the descriptor readable) and
    /// marks this loop as waiting (so ``perform(_:)``, ``wakeUp()`` and
    /// signalled sources from other threads make it readable too).
    /// - Returns: false if work is already waiting (a signalled version-0
    ///   source, a posted block, a stop request): the foreign loop must not
    ///   sleep, but poll and call ``runReady(in:)`` at once.
    /// Only the loop's own thread may call it.
    /// **Cost:** one lock; one `timerfd_settime` only if the earliest deadline changed.
    public func prepareForForeignWait(in mode: LoopMode = .default) -> Bool {
        preconditionOnOwnThread("Loop.prepareForForeignWait")
        return prepareForHostWait(mode)
    }

    /// Runs what is ready in `mode` and returns without ever blocking: one
    /// pass of `run(mode:timeout: .zero, returnAfterSourceHandled: false)`
    /// (observers see `entry`, `beforeTimers`, `beforeSources`, `exit`; never
    /// `beforeWaiting`: the foreign loop sleeps, not this one).
    /// - Returns: the pass's result: ``LoopRunResult/timedOut`` normally,
    ///   ``LoopRunResult/stopped`` after ``stop()``, ``LoopRunResult/finished``
    ///   if the mode is empty (then the descriptor's pending wake-up is
    ///   consumed, so an edge does not make the foreign loop spin).
    /// Only the loop's own thread may call it.
    /// **Cost:** one `epoll_wait(…, 0)` plus the handlers that run.
    @discardableResult
    public func runReady(in mode: LoopMode = .default) -> LoopRunResult {
        preconditionOnOwnThread("Loop.runReady")
        endHostWait()
        let result = run(mode: mode, timeout: .zero, returnAfterSourceHandled: false)
        if result == .finished {
            // An empty mode returns before looking at its waitset: take the
            // edge-triggered wake-up that made it readable.
            discardWaitsetWakeUp(for: mode)
        }
        return result
    }
}
