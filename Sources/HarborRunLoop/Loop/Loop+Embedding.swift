// Harbor — what a host event loop needs to drive this one (RL21): a mode's waitset descriptor and a hand-off around the host's sleep.
import HarborPorts

extension Loop {
    /// The epoll descriptor of `mode`'s waitset (the mode is created on first
    /// use), or nil for `.common` or a loop whose thread has exited.
    ///
    /// It polls readable while anything the mode watches is ready: a port
    /// message, the loop's wake-up eventfd, the mode's timerfd once armed (see
    /// ``prepareForHostWait(_:)``). A host loop (sd-event) watches it and runs
    /// a non-blocking pass, `run(mode:timeout: .zero, returnAfterSourceHandled: false)`,
    /// each time it is readable. The descriptor belongs to the loop: never close it.
    package func waitsetDescriptor(for mode: LoopMode) -> CInt? {
        guard mode != .common else { return nil }
        return state.withLock { state -> CInt? in
            guard !state.terminated else { return nil }
            return state.mode(mode).epoll.rawValue
        }
    }

    /// Called by a host loop just before it sleeps on the mode's waitset
    /// descriptor instead of this loop sleeping in `epoll_wait` itself: arms
    /// the mode's timerfd to its earliest timer deadline and marks the loop as
    /// waiting (so `perform`, `add` and rescheduled timers write the wake-up
    /// eventfd, which makes the waitset readable).
    ///
    /// - Returns: false when work is already waiting (a signalled source, a
    ///   posted block, a stop request): the host must run a pass now rather
    ///   than sleep. True for a mode that does not exist (nothing can wait).
    /// Only the loop's own thread may call it.
    package func prepareForHostWait(_ name: LoopMode) -> Bool {
        guard let mode = state.withLock({ $0.modes[name] }) else { return true }
        if prepareToWait(mode, poll: false) { return true }
        // In an empty mode only a stop request can be waiting, and a pass
        // returns `finished` without taking it: sleep (marked waiting, so a
        // later post still wakes the host) rather than spin.
        return state.withLock { state -> Bool in
            guard isEmpty(mode, state) else { return false }
            state.isWaiting = true
            return true
        }
    }

    /// Called by a host loop when it wakes (before running a pass): the loop
    /// is no longer waiting, so posters need not write its eventfd.
    package func endHostWait() {
        state.withLock { $0.isWaiting = false }
    }
}
