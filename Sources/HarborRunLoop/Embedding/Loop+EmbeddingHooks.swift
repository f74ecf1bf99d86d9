// Harbor — what a host event loop needs to drive this one (RL21): a mode's waitset descriptor and a hand-off around the host's sleep.
import HarborPorts
import Synchronization
import HarborSystem

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

    /// Takes the ready events of `mode`'s waitset without serving them: a
    /// pass over an empty mode returns before looking at the waitset, and
    /// the edge-triggered wake-up that made it readable must not make the
    /// host call again. Only the loop's own thread may call it.
    package func discardWaitsetWakeUp(for mode: LoopMode) {
        guard let waitset = waitsetDescriptor(for: mode) else { return }
        EpollControl.discardReady(waitset)
    }

    // MARK: A guest loop's descriptor (sd-event inside this loop)

    /// Puts a guest event loop's descriptor in `mode`'s waitset, watched for
    /// readable. Its events wake this loop and are otherwise ignored (their
    /// token is no ``WaitToken`` kind); the guest is stepped by an observer.
    /// - Throws: the `epoll_ctl` error, or EBADF if the mode has no waitset
    ///   (`.common`, a loop whose thread has exited).
    package func addGuestDescriptor(_ fd: CInt, to mode: LoopMode) throws(SystemError) {
        try EpollControl.add(try waitset(mode), fd, events: .readable, token: Self.guestToken)
    }

    /// Stops (`watching` false) or restarts watching a guest descriptor
    /// without removing it: a guest that cannot be stepped now (it is
    /// dispatching) must not keep a nested run awake.
    package func watchGuestDescriptor(_ fd: CInt, in mode: LoopMode, _ watching: Bool) throws(SystemError) {
        try EpollControl.modify(try waitset(mode), fd, events: watching ? .readable : [], token: Self.guestToken)
    }

    /// Takes a guest descriptor out of `mode`'s waitset; one already gone is
    /// not an error.
    package func removeGuestDescriptor(_ fd: CInt, from mode: LoopMode) {
        guard let waitset = waitsetDescriptor(for: mode) else { return }
        EpollControl.remove(waitset, fd)
    }

    /// The token of a guest descriptor: 0, which no ``WaitToken`` decodes to.
    private static let guestToken: UInt64 = 0

    private func waitset(_ mode: LoopMode) throws(SystemError) -> CInt {
        guard let waitset = waitsetDescriptor(for: mode) else { throw SystemError.badDescriptor("epoll_ctl") }
        return waitset
    }
}
