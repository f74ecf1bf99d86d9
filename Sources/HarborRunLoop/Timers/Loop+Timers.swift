// Harbor — the timer engine's one interface to the loop: add, remove, reschedule, invalidate, fire, tear down.
//
// Everything the rest of the loop does with timers goes through the methods
// of this file (and `ModeState.timers` for a mode's wake-up deadline and
// emptiness); the engine behind them — `ModeTimers`' heaps, each timer's
// `TimerPlacements` and `TimerStorage`, the lock stripes — is seen by
// nothing else. Timers are not `LoopItem`s: they keep their modes and heap
// positions in themselves (guarded by the owner loop's lock), so none of
// these operations allocates or hashes.
// Lock order as everywhere: the loop's lock, then the timer's.
import HarborPorts
import Synchronization
import HarborSystem

/// A timer collected by `doTimers`, with what it looked like then.
struct DueTimer {
    /// Holds one retain, which whoever takes the entry must give back (or
    /// hand on): a one-shot timer's is the retain its heap entry held, so a
    /// fire costs no retain and release per list the timer passes through.
    let timer: Unmanaged<LoopTimer>
    let repeats: Bool
    /// The timer's reschedule count when collected: if it changed before or
    /// during the callout, someone re-armed the timer.
    let reschedules: UInt32
}

extension Loop {
    /// Adds `timer` to `mode` (every common mode for `.common`). A timer
    /// belongs to one loop: adding it to a second loop is ignored, as is
    /// adding an invalid timer. Wakes the loop (after unlocking) if it sleeps,
    /// so it re-arms its timerfd.
    func addTimer(_ timer: LoopTimer, to mode: LoopMode) {
        let wake = state.withLockedValue { state -> WakeUpCounter? in
            guard !state.terminated else { return nil }
            let claim = timer.state.withLock { timerState -> (fire: Int64, tolerance: Int64, wasCommon: Bool)? in
                guard timerState.valid else { return nil }
                if let other = timerState.owner, other !== self { return nil }
                timerState.owner = self
                let wasCommon = timerState.isCommon
                if mode == .common { timerState.isCommon = true }
                return (timerState.fireDate, timerState.tolerance, wasCommon)
            }
            guard let claim else { return nil }
            if mode == .common {
                if !claim.wasCommon { state.commonTimers.append(timer) }
                for name in state.commonModes {
                    state.mode(name).timers.add(timer, fire: claim.fire, tolerance: claim.tolerance)
                }
            } else {
                state.mode(mode).timers.add(timer, fire: claim.fire, tolerance: claim.tolerance)
            }
            return state.wakeUpIfWaiting()
        }
        wake?.counter.signal()  // after unlocking: see `LoopState.wakeUpIfWaiting`
    }

    /// Removes `timer` from `mode` only (`.common`: from the common set's
    /// modes, and it stops joining new common modes). It stays valid.
    func removeTimer(_ timer: LoopTimer, from mode: LoopMode) {
        let wake = state.withLockedValue { state -> WakeUpCounter? in
            guard !state.terminated else { return nil }
            let wasCommon = timer.state.withLock { timerState -> Bool? in
                guard timerState.owner === self else { return nil }
                let wasCommon = timerState.isCommon
                if mode == .common { timerState.isCommon = false }
                return wasCommon
            }
            guard let wasCommon else { return nil }
            if mode == .common {
                if wasCommon { state.commonTimers.removeAll { $0 === timer } }
                for name in state.commonModes { state.modes[name]?.timers.remove(timer) }
            } else {
                state.modes[mode]?.timers.remove(timer)
            }
            if timer.placements.isEmpty {
                // In no mode and not common: free to join another loop.
                timer.state.withLock { if !$0.isCommon { $0.owner = nil } }
            }
            return state.wakeUpIfWaiting()
        }
        wake?.counter.signal()
    }

    /// Removes an invalidated timer from every mode and from the common items.
    func detachTimer(_ timer: LoopTimer) {
        let wake = state.withLockedValue { state -> WakeUpCounter? in
            guard !state.terminated else { return nil }
            detach(timer, state: &state)
            return state.wakeUpIfWaiting()
        }
        wake?.counter.signal()
    }

    /// Detaches a pass's finished one-shot timers under one lock, then gives
    /// back the retain each reference holds. Called on the loop's own
    /// thread, which is awake: no wake-up to send.
    func detachTimers(_ timers: [Unmanaged<LoopTimer>]) {
        state.withLockedValue { state in
            guard !state.terminated else { return }
            for timer in timers { timer._withUnsafeGuaranteedRef { detach($0, state: &state) } }
        }
        for timer in timers { timer.release() }
    }

    /// One timer's detach, under the loop's lock and then (once) the timer's:
    /// it leaves every mode's table and the common items, and its owner is
    /// cleared once no placement is left.
    private func detach(_ timer: LoopTimer, state: inout LoopState) {
        let wasCommon = timer.state.withLock { timerState -> Bool? in
            guard timerState.owner === self else { return nil }
            let wasCommon = timerState.isCommon
            timerState.isCommon = false
            timer.placements.forEachMode { $0.remove(timer) }
            timerState.owner = nil
            return wasCommon
        }
        if wasCommon == true { state.commonTimers.removeAll { $0 === timer } }
    }

    /// Whether `timer` is in `mode` of this loop (`.common`: added for common).
    func containsTimer(_ timer: LoopTimer, _ mode: LoopMode) -> Bool {
        state.withLockedValue { state in
            guard !state.terminated else { return false }
            let (mine, isCommon) = timer.state.withLock { ($0.owner === self, $0.isCommon) }
            guard mine, timer.isValid else { return false }
            if mode == .common { return isCommon }
            guard let modeState = state.modes[mode] else { return false }
            return timer.placements.placement(in: modeState.timers) != nil
        }
    }

    /// A timer's dates changed: move it in every mode's heaps (re-inserting
    /// a fired one-shot timer whose handler re-armed it); a sleeping loop
    /// wakes to re-arm its timerfd.
    func timerRescheduled(_ timer: LoopTimer) {
        let wake = state.withLockedValue { state -> WakeUpCounter? in
            guard !state.terminated else { return nil }
            let dates = timer.state.withLock { timerState -> (fire: Int64, tolerance: Int64)? in
                guard timerState.valid, timerState.owner === self else { return nil }
                return (timerState.fireDate, timerState.tolerance)
            }
            guard let dates else { return nil }
            timer.placements.forEachMode { $0.schedule(timer, fire: dates.fire, tolerance: dates.tolerance) }
            return state.wakeUpIfWaiting()
        }
        wake?.counter.signal()
    }

    /// Adds the common timers to a mode that just joined the common set.
    /// Loop lock held.
    func addCommonTimers(to mode: ModeState, state: borrowing LoopState) {
        for timer in state.commonTimers {
            let dates = timer.state.withLock { timerState -> (fire: Int64, tolerance: Int64)? in
                guard timerState.valid, timerState.owner === self else { return nil }
                return (timerState.fireDate, timerState.tolerance)
            }
            guard let dates else { continue }
            mode.timers.add(timer, fire: dates.fire, tolerance: dates.tolerance)
        }
    }

    /// The loop ends (its thread exited; its lock is no longer needed, its
    /// modes are being released): `timers` leave, without touching heaps,
    /// so each is free to join another loop.
    func releaseTimers(_ timers: [LoopTimer]) {
        for timer in timers {
            timer.state.withLock { state in
                guard state.owner === self || state.owner == nil else { return }
                timer.placements.removeAll()
                state.isCommon = false
                state.owner = nil
            }
        }
    }

    /// Takes up to `limit` timers of `timers` that are due at `now` and were
    /// scheduled before `mark`, earliest first, into `due`. A repeating timer
    /// moves to its next grid point in every mode; a one-shot timer leaves
    /// every heap but stays a member (it is invalidated after its callout, or
    /// re-armed by its handler). Each due timer costs O(log n) per mode it is
    /// in. Returns true if it stopped at `limit` (more may be due).
    /// `popped` is the caller's scratch buffer (empty on entry and on
    /// return), kept across batches so a pass allocates it once.
    /// Loop lock held.
    func collectDueTimers(
        _ timers: ModeTimers, now: Int64, scheduledBefore mark: UInt64, limit: Int,
        into due: inout [DueTimer], popped: inout [Unmanaged<LoopTimer>]
    ) -> Bool {
        // First every pop, with no lock but the loop's held: a pop's sift
        // writes the positions of the timers it moves into those (cold)
        // objects, and the lock taken for each timer below is a locked
        // instruction, which on x86 waits until every earlier store has
        // reached memory. One such wait per batch, not one per timer.
        // Each popped reference holds its heap entry's retain.
        defer { popped.removeAll(keepingCapacity: true) }
        while popped.count < limit, let reference = timers.firstDue(at: now, scheduledBefore: mark) {
            _ = reference._withUnsafeGuaranteedRef { timers.parkKeepingReference($0) }
            popped.append(reference)
            timers.prefetchFirstDue()
        }
        for reference in popped {
            reference._withUnsafeGuaranteedRef { timer in
                let (firing, repeats, fire, tolerance, reschedules) = timer.state.withLock { timerState in
                    // A setFireDate still on its way here (it waits for our lock)
                    // has already moved the date: never fire early, follow it.
                    let firing = timerState.fireDate <= now
                    let repeats = firing && timerState.advance(pastNow: now)
                    return (firing, repeats, timerState.fireDate, timerState.tolerance, timerState.reschedules)
                }
                if !firing || repeats {
                    // Back into this mode's heap (with a retain of its own),
                    // moved in the others.
                    timer.placements.forEachMode { $0.schedule(timer, fire: fire, tolerance: tolerance) }
                    if firing {
                        due.append(DueTimer(timer: reference, repeats: true, reschedules: reschedules))
                    } else {
                        reference.release()
                    }
                    return
                }
                // A one-shot timer leaves the other modes' heaps too; the due
                // list keeps the retain this mode's entry held.
                if !timer.placements.isOnly(timers) {
                    timer.placements.forEachMode { other in
                        if other !== timers { other.park(timer) }
                    }
                }
                due.append(DueTimer(timer: reference, repeats: false, reschedules: reschedules))
            }
        }
        return popped.count == limit
    }
}

extension Loop {
    /// Fires every timer of the mode that was due (fire date ≤ now) and
    /// scheduled when the pass began, earliest first: what CF collects before
    /// its first timer callout. A timer scheduled or moved by a callout waits
    /// for the next pass, even if due. Repeating timers move to their next
    /// grid point before their callout (skipping missed ticks); one-shot
    /// timers leave every heap once, here, and are invalidated after it. A
    /// timer invalidated or re-armed by an earlier callout of the same pass is
    /// skipped (CF re-checks too). Firing is not "handling a source".
    ///
    /// Due timers are taken in batches of ``timerBatch``, each called out and
    /// its finished one-shot timers detached under one lock, so that a
    /// timer's object is still in cache from its collection to its detach
    /// (a million due timers taken at once were three cold passes over them).
    func doTimers(_ mode: ModeState) {
        mode.timerDescriptor.drain()
        let now = MonotonicInstant.now.nanoseconds
        let mark = state.withLockedValue { _ in
            mode.armedDeadline = nil
            return mode.timers.sequenceMark
        }
        var due: [DueTimer] = []
        due.reserveCapacity(Self.timerBatch)
        var popped: [Unmanaged<LoopTimer>] = []
        popped.reserveCapacity(Self.timerBatch)
        // Each entry of `due` and `finished` holds one retain on its timer
        // (see `DueTimer`), given back here or by `detachTimers`.
        var finished: [Unmanaged<LoopTimer>] = []
        var more = true
        while more {
            more = state.withLockedValue { state -> Bool in
                guard !state.terminated else { return false }
                return collectDueTimers(mode.timers, now: now, scheduledBefore: mark, limit: Self.timerBatch,
                                        into: &due, popped: &popped)
            }
            for entry in due {
                let finishedIt = entry.timer._withUnsafeGuaranteedRef { timer -> Bool in
                    guard timer.state.withLock({ $0.valid && $0.reschedules == entry.reschedules }) else { return false }
                    Callout.timer(timer)
                    if !entry.repeats {
                        // A one-shot timer is done, unless its handler re-armed it.
                        return timer.state.withLock { timerState -> Bool in
                            guard timerState.valid, timerState.reschedules == entry.reschedules else { return false }
                            timerState.valid = false
                            return true
                        }
                    }
                    if timer.state.withLock({ $0.reschedules }) == entry.reschedules {
                        // Ticks that passed during a long callout are skipped too.
                        skipTicksMissedDuringCallout(timer)
                    }
                    return false
                }
                if finishedIt { finished.append(entry.timer) } else { entry.timer.release() }
            }
            due.removeAll(keepingCapacity: true)
            if !finished.isEmpty {
                detachTimers(finished)
                finished.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Due timers taken per lock in ``doTimers(_:)``.
    static let timerBatch = 64

    private func skipTicksMissedDuringCallout(_ timer: LoopTimer) {
        let now = MonotonicInstant.now.nanoseconds
        guard timer.state.withLock({ $0.valid && $0.fireDate <= now }) else { return }
        state.withLockedValue { state in
            guard !state.terminated else { return }
            let dates = timer.state.withLock { timerState -> (fire: Int64, tolerance: Int64)? in
                guard timerState.valid, timerState.owner === self, timerState.advance(pastNow: now) else { return nil }
                return (timerState.fireDate, timerState.tolerance)
            }
            guard let dates else { return }
            timer.placements.forEachMode { $0.schedule(timer, fire: dates.fire, tolerance: dates.tolerance) }
        }
    }
}
