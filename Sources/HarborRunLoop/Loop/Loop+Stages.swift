// Harbor — the stages of a pass: observers and version-0 sources (timers: Timers/Loop+Timers.swift; waitset sources: Loop+ReadySources.swift).
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
        guard mode.isObserved(activity) else { return }
        let observers = state.withLock { _ in mode.observers.filter { $0.activities.contains(activity) } }
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
}
