// Harbor — the ways to run a loop (NSRunLoop's three and CF's two).
import HarborPorts
import HarborSystem

extension Loop {
    /// Runs `.default` pass after pass for as long as it has sources or
    /// timers. ``stop()`` ends only the current pass, as on Darwin; to end it
    /// for good, remove the mode's sources or use ``runUntilStopped()``.
    /// Only the loop's own thread may call it.
    /// **CF equivalent:** `-[NSRunLoop run]`.
    public func run() {
        while run(mode: .default, before: nil) {}
    }

    /// Like ``run()``, until `deadline`. **CF equivalent:** `-[NSRunLoop runUntilDate:]`.
    public func run(until deadline: ContinuousClock.Instant) {
        while run(mode: .default, before: deadline) && ContinuousClock.now < deadline {}
    }

    /// Runs one pass of `mode`: it returns after the first non-timer source
    /// was handled (a port message, a signalled source, a performed block),
    /// after ``stop()``, or at `deadline` (`nil`: no deadline).
    /// - Returns: false only if the mode had nothing to run when the call
    ///   began (no source, timer or pending block), so nothing ran; a mode
    ///   that emptied during the run (its one-shot timer fired, its last
    ///   source left) returns true, as NSRunLoop does.
    /// **CF equivalent:** `-[NSRunLoop runMode:beforeDate:]`.
    @discardableResult
    public func run(mode: LoopMode, before deadline: ContinuousClock.Instant?) -> Bool {
        preconditionOnOwnThread("Loop.run")
        let timeout = deadline.map { ContinuousClock.now.duration(to: $0) }
        let deadlineNanoseconds = timeout.map { $0 <= .zero ? Loop.passedDeadline : MonotonicInstant.now.adding($0).nanoseconds }
        return runSpecific(mode, deadline: deadlineNanoseconds, returnAfterSourceHandled: true) != nil
    }

    /// The primitive every other run is built on: runs `mode` until a reason
    /// to return, and says which.
    /// - Parameters:
    ///   - mode: the mode to run; `.common` or an empty mode returns
    ///     ``LoopRunResult/finished`` at once without telling observers.
    ///   - timeout: `nil` for none; zero makes one non-blocking pass.
    ///   - returnAfterSourceHandled: return ``LoopRunResult/handledSource``
    ///     after the first source (not timer) was handled.
    /// Only the loop's own thread may call it (a `precondition`). Runs may
    /// nest: a callout may run the loop again, in the same or another mode.
    /// Discardable, as C code routinely ignores `CFRunLoopRunInMode`'s
    /// result (a timed pass in a `while` loop that checks its own flag).
    /// **CF equivalent:** `CFRunLoopRunInMode`.
    @discardableResult
    public func run(mode: LoopMode, timeout: Duration?, returnAfterSourceHandled: Bool) -> LoopRunResult {
        preconditionOnOwnThread("Loop.run")
        // A zero timeout (a host loop's non-blocking pass) needs no clock:
        // `passedDeadline` is already past, whatever the time.
        let deadline = timeout.map { $0 <= .zero ? Loop.passedDeadline : MonotonicInstant.now.adding($0).nanoseconds }
        return runSpecific(mode, deadline: deadline, returnAfterSourceHandled: returnAfterSourceHandled) ?? .finished
    }

    /// Runs `.default` until ``stop()`` is called or the mode empties.
    /// **CF equivalent:** `CFRunLoopRun`.
    public func runUntilStopped() {
        while true {
            let result = run(mode: .default, timeout: nil, returnAfterSourceHandled: false)
            if result == .stopped || result == .finished { return }
        }
    }

    /// Enters `name`, tells observers `entry` and `exit` around the passes,
    /// and keeps the outer mode for nested runs. Returns nil when the mode
    /// had nothing to run at entry (it then tells no observer), which
    /// `run(mode:before:)` reports as false and the others as `finished`.
    ///
    /// The stop flag is per run, as CF's per-run data is: a run starts with
    /// it cleared, and the outer run's flag comes back when a nested run
    /// returns, so a stop sent to an inner run never ends the outer one.
    private func runSpecific(_ name: LoopMode, deadline: Int64?, returnAfterSourceHandled: Bool) -> LoopRunResult? {
        guard name != .common else { return nil }
        let entered = state.withLock { state -> (ModeState, outerStop: Bool)? in
            guard !state.terminated, let mode = state.modes[name], !isEmpty(mode, state) else { return nil }
            state.modeStack.append(name)
            defer { state.stopRequested = false }
            return (mode, state.stopRequested)
        }
        guard let (mode, outerStop) = entered else { return nil }
        notifyObservers(mode, .entry)
        let result = iterate(mode, deadline: deadline, returnAfterSourceHandled: returnAfterSourceHandled)
        notifyObservers(mode, .exit)
        state.withLock { state in
            _ = state.modeStack.popLast()
            state.stopRequested = outerStop
        }
        return result
    }

    /// The deadline of a zero-timeout run: before any clock reading, so the
    /// run polls once and times out without reading the clock.
    static let passedDeadline = Int64.min

    /// Whether running `mode` now would return at once as finished: it has
    /// no source, timer or pending block (or is `.common`, or the loop's
    /// thread has exited). NSRunLoop's `_CFRunLoopFinished`. Any thread.
    package func hasNothingToRun(inMode name: LoopMode) -> Bool {
        guard name != .common else { return true }
        return state.withLock { state in
            guard !state.terminated, let mode = state.modes[name] else { return true }
            return isEmpty(mode, state)
        }
    }

    /// A mode is empty without sources, timers or blocks waiting for it.
    func isEmpty(_ mode: ModeState, _ state: borrowing LoopState) -> Bool {
        !mode.hasSourcesOrTimers && !state.blocks.contains { $0.runs(in: mode) } && !mainQueueKeepsAlive(mode)
    }
}
