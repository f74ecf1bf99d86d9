// Harbor — the stages of a pass: observers, version-0 sources, timers, ports.
//
// Each stage collects under the loop's lock, lets it go, and calls out; before
// each callout it checks again that the item is still valid, because the
// previous callout may have invalidated it or run the loop re-entrantly.
import HarborPorts
import Synchronization

extension Loop {
    /// Tells the mode's observers of `activity`, lowest order first; a
    /// non-repeating observer is invalidated after its call.
    func notifyObservers(_ mode: ModeState, _ activity: LoopActivity) {
        let observers = state.withLock { _ -> [LoopObserver] in
            guard mode.observerMask.contains(activity) else { return [] }
            return mode.observers.filter { $0.activities.contains(activity) }
        }
        for observer in observers where observer.isValid {
            if !observer.repeats { observer.invalidate() }
            Callout.observer(observer, activity)
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

    /// Fires every timer of the mode that is due (fire date ≤ now), earliest
    /// first. Repeating timers move to their next grid point before their
    /// callout (skipping missed ticks); one-shot timers leave every heap and
    /// are invalidated after it. Firing is not "handling a source".
    func doTimers(_ mode: ModeState) {
        mode.timerDescriptor.drain()
        let now = MonotonicInstant.now.nanoseconds
        let due = state.withLock { state -> [(timer: LoopTimer, repeats: Bool, reschedules: UInt64)] in
            mode.armedDeadline = nil
            return mode.timers.due(at: now).map { timer in
                let repeats = timer.advance(pastNow: now)
                let (modes, fire, tolerance, reschedules) = timer.state.withLock {
                    ($0.membership.modes, $0.fireDate, $0.tolerance, $0.reschedules)
                }
                for name in modes {
                    guard let other = state.modes[name] else { continue }
                    if repeats {
                        other.timers.schedule(timer, fire: fire, tolerance: tolerance)
                    } else {
                        other.timers.remove(timer)
                    }
                }
                return (timer, repeats, reschedules)
            }
        }
        for entry in due where entry.timer.isValid {
            Callout.timer(entry.timer)
            let untouched = entry.timer.state.withLock { $0.reschedules } == entry.reschedules
            if !entry.repeats {
                // A one-shot timer is done, unless its handler re-armed it.
                if untouched { entry.timer.invalidate() }
            } else if untouched {
                // Ticks that passed during a long callout are skipped too.
                skipTicksMissedDuringCallout(entry.timer)
            }
        }
    }

    private func skipTicksMissedDuringCallout(_ timer: LoopTimer) {
        let now = MonotonicInstant.now.nanoseconds
        guard timer.state.withLock({ $0.valid && $0.fireDate <= now }) else { return }
        state.withLock { state in
            _ = timer.advance(pastNow: now)
            let (modes, fire, tolerance) = timer.state.withLock { ($0.membership.modes, $0.fireDate, $0.tolerance) }
            for name in modes { state.modes[name]?.timers.schedule(timer, fire: fire, tolerance: tolerance) }
        }
    }

    /// Serves a ready port: up to ``PortSource/batchLimit`` messages, one
    /// handler call each. Returns whether a message was handled. A stale
    /// token (the source left the loop since the event was queued) is dropped.
    func doPort(_ token: WaitToken, in mode: ModeState) -> Bool {
        guard let port = state.withLock({ $0.portSlots.lookup(token) }) else { return false }
        var handled = false
        for _ in 0..<PortSource.batchLimit {
            guard port.isValid, port.membership.withLock({ $0.modes.contains(mode.name) }),
                  let message = port.takeMessage()
            else { break }
            Callout.port(port, message)
            handled = true
        }
        return handled
    }
}
