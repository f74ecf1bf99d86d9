// Harbor — shape S02: an sd-event loop nested inside a Harbor run loop (Harbor owns the thread).
import CSystemd
import HarborPorts
import HarborRunLoop

/// Lets a Harbor run loop drive an sd-event loop on the same thread: while
/// the Harbor loop runs `mode`, sd-event's io, time, signal, defer and exit
/// sources fire.
///
/// How (the GLib-style prepare/wait/dispatch embedding): sd-event's own
/// epoll descriptor (`sd_event_get_fd`) sits in the mode's waitset, so it
/// wakes the Harbor loop like any port. An observer at `beforeSources` and
/// `beforeWaiting` steps sd-event's state machine without blocking:
/// `sd_event_prepare` (arms its timers; > 0 means something is pending) or,
/// once armed, `sd_event_wait(0)`. When sd-event has pending work, a
/// version-0 `LoopSource` is signalled; running it calls
/// `sd_event_dispatch` (one sd-event source per Harbor pass, as sd-event
/// itself dispatches one per iteration). A signalled source also keeps the
/// Harbor loop from sleeping, so "prepare said dispatch now" never sleeps.
/// The source keeps the mode alive; dispatching counts as "handled source".
///
/// Recursion: sd-event never dispatches recursively. A callback it
/// dispatches may run the Harbor loop nested (RL13): while it does, the
/// sd-event descriptor is taken out of the waitset (so a ready sd-event
/// cannot spin the nested run) and sd-event's sources wait until the
/// callback returns. Running the sd-event loop itself (``SDEventLoop/run(timeout:)``)
/// while this nesting drives it throws ``SystemdError/Code/recursiveDispatch``.
///
/// When sd-event exits (``SDEventLoop/exit(code:)``), its exit sources run
/// and the nesting detaches itself, so the mode may become empty.
///
/// **Cost:** one descriptor in the waitset; per Harbor iteration, one or two
/// non-blocking sd-event calls (`sd_event_wait(0)`, `sd_event_prepare`);
/// per sd-event source dispatched, one Harbor pass step.
/// **Thread safety:** make, use and release it on the loop's thread.
/// **Darwin equivalent:** none (a foreign loop's port as a `CFRunLoopSource`).
public final class SDEventInsideLoop: @unchecked Sendable {
    // @unchecked: confined to the loop's thread: the init checks it, and the
    // observer and source run only there.

    /// The sd-event loop being driven.
    public let event: SDEventLoop
    /// The Harbor loop driving it.
    public let loop: Loop
    /// The mode in which sd-event runs.
    public let mode: LoopMode
    private var source: LoopSource?
    private var observer: LoopObserver?
    private var dispatching = false
    private var suspended = false
    /// How many sd-event sources were dispatched (for tests and benchmarks).
    public private(set) var dispatches = 0
    /// The first error sd-event reported while being driven; the nesting
    /// detaches when one happens.
    public private(set) var failure: SystemdError?
    /// Whether it is still attached to the Harbor loop.
    public var isAttached: Bool { source != nil }

    /// Attaches `event` to `loop`'s `mode`. Call on the thread owning both.
    /// - Parameters:
    ///   - event: the sd-event loop to drive.
    ///   - loop: the Harbor loop that owns the thread.
    ///   - mode: the mode that drives `event` (not `.common`).
    ///   - order: the `LoopSource.order` of the dispatching source.
    /// - Throws: ``SystemdError/Code/wrongThread``, ``SystemdError/Code/invalidArgument``
    ///   for `.common`, ``SystemdError/Code/recursiveDispatch`` if a Harbor loop
    ///   already drives `event`, ``SystemdError/Code/finished`` if it exited.
    public init(event: SDEventLoop, loop: Loop, mode: LoopMode = .default, order: Int = 0) throws(SystemdError) {
        self.event = event
        self.loop = loop
        self.mode = mode
        try event.checkNesting("SDEventInsideLoop.init", loop: loop, mode: mode,
                               wrongThread: "a Harbor loop can drive sd-event only on its own thread")
        guard !event.drivenByLoop else {
            throw SystemdError(.recursiveDispatch, call: "SDEventInsideLoop.init", "a Harbor loop already drives this sd-event loop")
        }
        guard event.state != .finished else {
            throw SystemdError(.finished, call: "SDEventInsideLoop.init", "the sd-event loop has exited")
        }
        guard loop.waitsetDescriptor(for: mode) != nil else {
            throw SystemdError(.notAvailable, call: "SDEventInsideLoop.init", "the loop's thread has exited")
        }
        // A guest descriptor wakes the Harbor loop and is otherwise ignored
        // there; the observer below does the work.
        do {
            try loop.addGuestDescriptor(event.descriptor, to: mode)
        } catch {
            throw SystemdError(.system, errno: error.code, call: "epoll_ctl", "cannot add sd-event's descriptor to mode \(mode)")
        }
        event.drivenByLoop = true
        let source = LoopSource(order: order, label: "sd-event") { [weak self] in self?.dispatch() }
        let observer = LoopObserver(activities: [.beforeSources, .beforeWaiting], order: Int.max / 2) { [weak self] _ in
            self?.step()
        }
        self.source = source
        self.observer = observer
        loop.add(source, forMode: mode)
        loop.add(observer, forMode: mode)
    }

    deinit { detach() }

    /// Stops driving sd-event: its descriptor leaves the waitset and the
    /// source and observer leave the loop. sd-event may be left mid-iteration;
    /// ``SDEventLoop/run(timeout:)`` finishes that iteration. Idempotent.
    public func detach() {
        guard let source else { return }
        source.invalidate()
        observer?.invalidate()
        self.source = nil
        observer = nil
        loop.removeGuestDescriptor(event.descriptor, from: mode)
        event.drivenByLoop = false
    }

    /// Advances sd-event without blocking until it is either armed (its
    /// timers set, ready to be slept on) or has work pending; pending work
    /// signals the dispatching source.
    private func step() {
        guard let source else { return }
        if dispatching {
            // A callback sd-event is dispatching runs the Harbor loop nested:
            // sd-event cannot be stepped now, and its descriptor would keep
            // the nested run awake. Take it out until the callback returns.
            suspend()
            return
        }
        // At most: wait(0) → initial, then prepare → armed or pending.
        for _ in 0..<2 {
            let result: Int32
            switch event.state {
            case .initial:
                result = sd_event_prepare(event.pointer)
                if result == 0 { return }
            case .armed:
                result = sd_event_wait(event.pointer, 0)
                if result == 0 { continue }
            case .pending:
                result = 1
            case .finished:
                detach()
                return
            case .preparing, .running, .exiting:
                return
            }
            if result < 0 {
                fail(SystemdError(returned: result, call: event.state == .armed ? "sd_event_wait" : "sd_event_prepare"))
                return
            }
            source.signal()
            return
        }
    }

    /// Dispatches one pending sd-event source (the signalled LoopSource's handler).
    private func dispatch() {
        guard !dispatching, event.state == .pending else { return }
        dispatching = true
        let result = sd_event_dispatch(event.pointer)
        dispatching = false
        dispatches &+= 1
        if suspended { resume() }
        if result < 0 {
            fail(SystemdError(returned: result, call: "sd_event_dispatch"))
        } else if event.state == .finished {
            detach()
        }
    }

    private func suspend() {
        guard !suspended else { return }
        if (try? loop.watchGuestDescriptor(event.descriptor, in: mode, false)) != nil { suspended = true }
    }

    private func resume() {
        _ = try? loop.watchGuestDescriptor(event.descriptor, in: mode, true)
        suspended = false
    }

    private func fail(_ error: SystemdError) {
        if failure == nil { failure = error }
        detach()
    }
}
