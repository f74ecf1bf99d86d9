// Harbor — an owned sd-event loop: create, run, exit, and the thread it belongs to.
import CSystemd
import Glibc  // constants only: EBUSY, ESTALE
import HarborPorts
import HarborSystem

/// An sd-event loop (`sd_event *`) that Harbor owns: made with
/// `sd_event_new`, released with `sd_event_unref` when the last reference
/// goes (sources made through it keep it alive, as in libsystemd).
///
/// sd-event is single-threaded: a loop belongs to the thread that made it.
/// Every method checks that and throws ``SystemdError/Code/wrongThread``
/// otherwise, so using a loop from a wrong thread is a clear error rather
/// than a data race. sd-event never dispatches recursively: running the loop
/// from inside one of its own callbacks, or while a Harbor loop drives it
/// (``SDEventInsideLoop``), throws ``SystemdError/Code/recursiveDispatch``.
///
/// **Cost:** one epoll descriptor; per iteration, what sd-event costs
/// (prepare, one `epoll_wait`, one dispatch).
/// **Thread safety:** see above; the type is `Sendable` so a nesting can hold
/// it, but every method refuses other threads.
/// **Darwin equivalent:** none (the closest is a `CFRunLoop` itself).
public final class SDEventLoop: @unchecked Sendable {
    // @unchecked: confined to `owner` (the creating thread); every method
    // checks `isOwnThread` before touching `pointer` or `driver`.

    /// The `sd_event *`, for adding sources through libsystemd's own C API.
    /// Borrowed: do not unref it. Use it only on the loop's thread.
    public let pointer: OpaquePointer
    private let owner: SystemThread
    /// Set while a Harbor loop drives this one (shape S02), so misuse can
    /// say so.
    var drivenByLoop = false

    /// A new, empty sd-event loop owned by the calling thread.
    /// - Throws: ``SystemdError`` if libsystemd cannot allocate it.
    public init() throws(SystemdError) {
        var event: OpaquePointer?
        _ = try checkSystemd(sd_event_new(&event), "sd_event_new")
        guard let event else { throw SystemdError(.system, call: "sd_event_new", "returned no loop") }
        pointer = event
        owner = .current
    }

    deinit { sd_event_unref(pointer) }

    /// Whether the calling thread is the one this loop belongs to.
    public var isOwnThread: Bool { owner.isCurrent }

    func checkThread(_ call: String) throws(SystemdError) {
        guard isOwnThread else {
            throw SystemdError(.wrongThread, call: call, "an sd-event loop may be used only by the thread that made it")
        }
    }

    /// Where the loop is in its iteration (`sd_event_get_state`).
    public var state: SDEventState {
        SDEventState(rawValue: sd_event_get_state(pointer)) ?? .finished
    }

    /// Runs one iteration: waits up to `timeout` (nil: forever) and
    /// dispatches at most one source (`sd_event_run`).
    /// - Returns: true if a source was dispatched, false on timeout.
    /// - Throws: ``SystemdError/Code/recursiveDispatch`` from inside one of its
    ///   own callbacks or while a Harbor loop drives it; ``SystemdError/Code/finished``
    ///   once it has exited.
    @discardableResult
    public func run(timeout: Duration? = nil) throws(SystemdError) -> Bool {
        try checkRunnable("sd_event_run")
        let usec = timeout.map { UInt64(max(0, $0.microsecondsRoundedUp)) } ?? UInt64.max
        switch state {
        case .armed:
            // Left prepared by a Harbor loop that drove it and detached:
            // finish that iteration rather than refuse.
            guard try checkSystemd(sd_event_wait(pointer, usec), "sd_event_wait") > 0 else { return false }
            return try checkSystemd(sd_event_dispatch(pointer), "sd_event_dispatch") > 0
        case .pending:
            return try checkSystemd(sd_event_dispatch(pointer), "sd_event_dispatch") > 0
        default:
            return try checkSystemd(sd_event_run(pointer, usec), "sd_event_run") > 0
        }
    }

    /// Runs until ``exit(code:)`` is called, then returns its code
    /// (`sd_event_loop`). Same errors as ``run(timeout:)``.
    @discardableResult
    public func runUntilExit() throws(SystemdError) -> Int32 {
        try checkRunnable("sd_event_loop")
        while state == .armed || state == .pending { try run() }
        if state == .finished { return try exitCode() }
        return try checkSystemd(sd_event_loop(pointer), "sd_event_loop")
    }

    /// Asks the loop to exit with `code` after the current iteration
    /// (`sd_event_exit`); its exit sources then run.
    public func exit(code: Int32 = 0) throws(SystemdError) {
        try checkThread("sd_event_exit")
        _ = try checkSystemd(sd_event_exit(pointer, code), "sd_event_exit")
    }

    /// The code given to ``exit(code:)``; throws if the loop has not been asked to exit.
    public func exitCode() throws(SystemdError) -> Int32 {
        var code: Int32 = 0
        _ = try checkSystemd(sd_event_get_exit_code(pointer, &code), "sd_event_get_exit_code")
        return code
    }

    /// The loop's epoll descriptor (`sd_event_get_fd`): readable while sd-event has
    /// something to process. Borrowed: never close it.
    public var descriptor: CInt { sd_event_get_fd(pointer) }

    /// Refuses to start an iteration that sd-event would refuse, with a
    /// sentence saying why.
    private func checkRunnable(_ call: String) throws(SystemdError) {
        try checkThread(call)
        switch state {
        case .initial, .armed, .pending:
            guard drivenByLoop else { return }
            throw SystemdError(
                .recursiveDispatch, errno: EBUSY, call: call,
                "a Harbor run loop drives this sd-event loop (SDEventInsideLoop); run the Harbor loop instead, or detach first")
        case .finished:
            throw SystemdError(.finished, errno: ESTALE, call: call, "the loop has exited; it runs no more")
        case .running, .exiting, .preparing:
            throw SystemdError(
                .recursiveDispatch, errno: EBUSY, call: call,
                "called from inside one of this loop's own callbacks; sd-event never dispatches recursively (return from the callback instead)")
        }
    }
}

/// Where an sd-event loop is in its iteration (`sd_event_get_state`).
/// **Thread safety:** a value.
public enum SDEventState: Int32, Sendable {
    /// Between iterations (`SD_EVENT_INITIAL`).
    case initial = 0
    /// Prepared: timers armed, ready to wait (`SD_EVENT_ARMED`).
    case armed = 1
    /// Sources are pending dispatch (`SD_EVENT_PENDING`).
    case pending = 2
    /// Inside a callback (`SD_EVENT_RUNNING`).
    case running = 3
    /// Running exit sources (`SD_EVENT_EXITING`).
    case exiting = 4
    /// Exited (`SD_EVENT_FINISHED`).
    case finished = 5
    /// Running prepare callbacks (`SD_EVENT_PREPARING`).
    case preparing = 6
}

extension Duration {
    /// Whole microseconds, rounded up so a wait never ends early.
    var microsecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        let micros = attoseconds / 1_000_000_000_000
        let rest = attoseconds % 1_000_000_000_000
        return seconds &* 1_000_000 &+ micros &+ (rest > 0 ? 1 : 0)
    }
}
