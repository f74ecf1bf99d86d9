// Harbor — the stages of a pass: observers, version-0 sources, timers, ports, descriptors.
//
// Each stage collects under the loop's lock, lets it go, and calls out; before
// each callout it checks again that the item is still valid, because the
// previous callout may have invalidated it or run the loop re-entrantly.
import HarborPorts
import Synchronization
import HarborSystem

extension Loop {
    /// Tells the mode's observers of `activity`, lowest order first. As in
    /// CF, a non-repeating observer is invalidated after its callout returns
    /// (it is still valid inside it), and an observer whose callout is on
    /// the stack (a nested run started inside it) is not called again.
    func notifyObservers(_ mode: ModeState, _ activity: LoopActivity) {
        let observers = state.withLock { _ -> [LoopObserver] in
            guard mode.observerMask.contains(activity) else { return [] }
            return mode.observers.filter { $0.activities.contains(activity) }
        }
        for observer in observers where observer.isValid {
            guard observer.beginFiring() else { continue }
            Callout.observer(observer, activity)
            if !observer.repeats { observer.invalidate() }
            observer.endFiring()
        }
    }

    /// Runs the mode's signalled version-0 sources in `(order, signal time)`
    /// order. With `stopAfterOne`, stops after the first (CF does the same
    /// when the run returns after a handled source). Returns whether any ran.
    func doSources(_ mode: ModeState, stopAfterOne: Bool) -> Bool {
        var pending = state.withLock { _ in mode.sources.filter(\.isSignalled) }
        guard !pending.isEmpty else { return false }
        if pending.count > 1 {
            pending.sort { ($0.order, $0.signalStamp.load(ordering: .relaxed)) < ($1.order, $1.signalStamp.load(ordering: .relaxed)) }
        }
        var ran = false
        for source in pending where source.isValid {
            guard source.takeSignal() else { continue }
            Callout.source(source)
            ran = true
            if stopAfterOne { break }
        }
        return ran
    }

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

    /// Serves a ready port: up to ``PortSource/batchLimit`` messages, one
    /// handler call each. Returns whether a message was handled. A port that
    /// was invalidated or left the mode since its event was queued is skipped.
    func doPort(_ port: PortSource, in mode: ModeState) -> Bool {
        var handled = false
        for _ in 0..<PortSource.batchLimit {
            guard port.isValid, port.membership.withLock({ $0.contains(mode.name, in: self) }),
                  let message = port.takeMessage()
            else { break }
            Callout.port(port, message)
            handled = true
        }
        // Readable with nothing to take (a nudge, or a write that raced a
        // receive): clear it, or the level-triggered waitset wakes us again.
        if !handled && port.isValid { port.clearSpuriousReadiness() }
        return handled
    }

    /// Serves one ready descriptor: one handler call per pass (the fairness
    /// bound). A source invalidated or gone from the mode since its event
    /// was queued is skipped. Returns whether the handler ran.
    func doDescriptor(_ source: DescriptorSource, events bits: UInt32, in mode: ModeState) -> Bool {
        guard source.isValid, source.membership.withLock({ $0.contains(mode.name, in: self) }) else { return false }
        Callout.descriptor(source, DescriptorEvents(epoll: bits))
        return true
    }
}
