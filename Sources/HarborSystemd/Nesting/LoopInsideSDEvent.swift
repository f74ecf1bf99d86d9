// Harbor — shape S01: a Harbor run loop nested inside an sd-event loop (sd-event owns the thread).
import CSystemd
import HarborPorts
import HarborRunLoop
import HarborSystem

/// Lets an sd-event loop drive a Harbor run loop on the same thread: while
/// sd-event runs (``SDEventLoop/runUntilExit()`` or libsystemd's own
/// `sd_event_loop`), the Harbor loop's timers, port messages, posted blocks
/// and signalled sources fire on time in `mode`.
///
/// How: the mode's waitset is itself an epoll descriptor, so it sits in
/// sd-event as one io source. Each time it is readable, one non-blocking
/// pass of the Harbor loop runs (`run(mode:timeout: .zero, …)`). Just before
/// sd-event sleeps, a prepare callback arms the mode's timerfd to its
/// earliest timer (so timers make the waitset readable on time) and marks
/// the Harbor loop as waiting (so `perform` and `wakeUp` from other threads
/// write its eventfd, which is in the waitset too). If work is already
/// waiting, a one-shot defer source makes sd-event run a pass instead of
/// sleeping. No polling and no helper thread.
///
/// What a callout may do in this shape (Docs/Systemd.md has the table):
/// Harbor callouts run inside `sd_event_dispatch`, so they must not run the
/// sd-event loop (``SDEventLoop/run(timeout:)`` throws
/// ``SystemdError/Code/recursiveDispatch``); they may run the Harbor loop
/// nested (sd-event's other sources then wait until it returns).
///
/// Observers of `mode` see `entry`, `beforeTimers`, `beforeSources` and
/// `exit` around each pass, never `beforeWaiting`/`afterWaiting` (the
/// Harbor loop never sleeps itself: sd-event does).
///
/// **Cost:** one io source, one defer source; per wake-up, one pass
/// (`epoll_wait` with timeout 0 on the waitset); before each sd-event sleep,
/// one lock and, only if the earliest deadline changed, one `timerfd_settime`.
/// **Thread safety:** make, use and release it on the loop's thread (the
/// Harbor loop's own thread, which must also own the sd-event loop).
/// **Darwin equivalent:** none; CF's closest is a `CFRunLoop` hosting another
/// loop's port (the way GLib hosts an `NSRunLoop`).
public final class LoopInsideSDEvent: @unchecked Sendable {
    // @unchecked: confined to the loop's thread; every entry point is either
    // an sd-event callback (dispatched on that thread) or checks the thread.

    /// The Harbor loop being driven.
    public let loop: Loop
    /// The mode whose items run.
    public let mode: LoopMode
    /// The sd-event loop driving it.
    public let event: SDEventLoop
    private var ioSource: OpaquePointer?
    private var deferSource: OpaquePointer?
    private var inPass = false
    /// How many passes ran (for tests and benchmarks).
    public private(set) var passes = 0

    /// Attaches `loop`'s `mode` to `event`. Call on the thread that owns both.
    /// - Parameters:
    ///   - loop: the Harbor loop to run inside `event`.
    ///   - mode: the mode whose items `event` drives (not `.common`).
    ///   - event: the sd-event loop that owns the thread.
    ///   - priority: sd-event priority of the Harbor sources
    ///     (lower runs first; 0 is sd-event's default).
    /// - Throws: ``SystemdError/Code/wrongThread`` off that thread,
    ///   ``SystemdError/Code/invalidArgument`` for `.common`,
    ///   ``SystemdError/Code/notAvailable`` for a loop whose thread exited.
    public init(loop: Loop, mode: LoopMode = .default, event: SDEventLoop, priority: Int64 = 0) throws(SystemdError) {
        self.loop = loop
        self.mode = mode
        self.event = event
        try event.checkNesting("LoopInsideSDEvent.init", loop: loop, mode: mode,
                               wrongThread: "a Harbor loop can be driven only on its own thread")
        guard let waitset = loop.waitsetDescriptor(for: mode) else {
            throw SystemdError(.notAvailable, call: "LoopInsideSDEvent.init", "the loop's thread has exited")
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        var io: OpaquePointer?
        _ = try checkSystemd(sd_event_add_io(event.pointer, &io, waitset, EpollEvents.readable.rawValue, { _, _, _, userdata in
            Unmanaged<LoopInsideSDEvent>.fromOpaque(userdata!).takeUnretainedValue().runPass()
            return 0
        }, me), "sd_event_add_io")
        ioSource = io
        var deferred: OpaquePointer?
        do {
            _ = try checkSystemd(sd_event_add_defer(event.pointer, &deferred, { _, userdata in
                Unmanaged<LoopInsideSDEvent>.fromOpaque(userdata!).takeUnretainedValue().runPass()
                return 0
            }, me), "sd_event_add_defer")
            deferSource = deferred
            _ = try checkSystemd(sd_event_source_set_enabled(deferred, Int32(SD_EVENT_OFF)), "sd_event_source_set_enabled")
            _ = try checkSystemd(sd_event_source_set_prepare(io, { _, userdata in
                Unmanaged<LoopInsideSDEvent>.fromOpaque(userdata!).takeUnretainedValue().beforeSleep()
                return 0
            }), "sd_event_source_set_prepare")
            if priority != 0 {
                _ = try checkSystemd(sd_event_source_set_priority(io, priority), "sd_event_source_set_priority")
                _ = try checkSystemd(sd_event_source_set_priority(deferred, priority), "sd_event_source_set_priority")
            }
            _ = try checkSystemd(sd_event_source_set_description(io, "harbor-loop"), "sd_event_source_set_description")
        } catch {
            detach()
            throw error
        }
        // Work posted before attaching must not wait for sd-event's first sleep.
        _ = sd_event_source_set_enabled(deferred, Int32(SD_EVENT_ONESHOT))
    }

    deinit { detach() }

    /// Removes the Harbor loop from sd-event; its items stay in the loop.
    /// Idempotent. Call on the loop's thread (or let the last reference go there).
    public func detach() {
        if let ioSource { sd_event_source_disable_unref(ioSource) }
        if let deferSource { sd_event_source_disable_unref(deferSource) }
        ioSource = nil
        deferSource = nil
        loop.endHostWait()
    }

    /// One non-blocking pass of the Harbor loop: what is ready runs.
    private func runPass() {
        // sd-event never re-enters a dispatch, so this can only be reached
        // from a nested Harbor run that itself ran sd-event — which
        // SDEventLoop refuses. Guard anyway: a pass inside a pass is
        // harmless for Harbor, but would be a surprise.
        guard !inPass else { return }
        inPass = true
        defer { inPass = false }
        passes &+= 1
        loop.endHostWait()
        if loop.run(mode: mode, timeout: .zero, returnAfterSourceHandled: false) == .finished {
            // An empty mode returns before looking at its waitset; take what
            // made it readable (an edge-triggered wake-up) so sd-event does
            // not call us again for it.
            loop.discardWaitsetWakeUp(for: mode)
        }
    }


    /// sd-event is about to sleep: arm the Harbor timers in the waitset and
    /// let posters wake us; if work is already waiting, run a pass first.
    private func beforeSleep() {
        guard let deferSource else { return }
        if !loop.prepareForHostWait(mode) {
            // Pending work (a signalled source, a block, a stop): dispatch a
            // pass now instead of sleeping.
            sd_event_source_set_enabled(deferSource, Int32(SD_EVENT_ONESHOT))
        }
    }
}
