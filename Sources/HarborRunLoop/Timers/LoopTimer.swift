// Harbor — timers: a fire date on CLOCK_MONOTONIC, an optional interval, a tolerance.
import HarborPorts
import HarborSystem

/// A timer that calls its handler on the loop's thread at its fire date, and
/// then every `interval` if it repeats.
///
/// - **Never early:** a timer never fires before its fire date.
/// - **On the grid:** a repeating timer's later fire dates are
///   `fireDate + k·interval`; ticks missed while the thread was busy are
///   skipped, never fired in a burst.
/// - **Tolerance:** the loop may fire it up to `tolerance` late, only so
///   that it shares the wake-up of a timer due after it; a lone timer fires
///   at its fire date. (The mode's timerfd is armed to the latest fire date
///   not after the earliest fire date + tolerance of its timers, and then
///   every due timer fires.)
/// - **One-shot:** invalidated after it fires; it leaves every mode, and if
///   that empties the running mode the run returns ``LoopRunResult/finished``.
/// - Firing a timer is not "handling a source".
///
/// Dates are kept on `CLOCK_MONOTONIC`, the clock `timerfd` uses. They are
/// given as offsets from now (`Duration`, ``timeUntilFire`` reads one back)
/// or as absolute `ContinuousClock` instants (``nextFireDate``,
/// ``setNextFireDate(_:)``, ``init(at:repeating:tolerance:label:_:)``), the
/// clock of `Loop.run(until:)`; a date that was set reads back exactly.
///
/// **Cost:** one allocation (the object; its lock is one of a fixed set
/// shared by all timers). Adding or rescheduling is O(log n) per mode and
/// invalidating O(1) amortised, with no hashing: the timer keeps its own
/// position in each mode's heap. An invalidated timer is released at once
/// (its heap entry may linger as a tombstone that holds nothing). An idle
/// loop with any number of timers holds one armed timerfd per mode and
/// wakes only when the earliest is due.
/// **Thread safety:** every method, any thread; the handler runs on the
/// loop's thread with no lock held.
/// **CF equivalent:** `CFRunLoopTimerCreate`, `NSTimer`.
public final class LoopTimer: Sendable, CustomStringConvertible {
    // Every stored property is a `let`: what the timer engine changes is in
    // `storage` (`TimerStorage`, internal), guarded by the owner loop's lock
    // and the timer's lock stripe.

    // Field order puts what every add, fire and cancel touches in the
    // object's first 64 bytes, with the header that retains write: the
    // placement in the first mode (every heap move writes its index, with a
    // plain store: see `TimerPlacements`), then the fire date, validity,
    // owner and tolerance. A cache line is 64 bytes
    // and malloc aligns to 16, so most timers pay one cold line, not three.
    // (Swift lays out a class's stored properties, and a struct's, in
    // declaration order.)
    struct State {
        var fireDate: Int64
        /// Bumped by every reschedule, so a one-shot timer whose handler
        /// re-armed it is not invalidated after the callout. UInt32 (it is
        /// only compared for equality across one callout) to share a word
        /// with the flags.
        var reschedules: UInt32 = 0
        var valid = true
        /// Added "for common": joins modes added to the common set later.
        var isCommon = false
        /// The loop the timer is scheduled in (at most one). Set under that
        /// loop's lock when the timer joins its first mode, cleared under it
        /// when the timer leaves its last one (or is invalidated, or the loop
        /// is torn down); nil means no placements. Strong, unlike other
        /// items' weak `Membership.loop`: a weak store and load cost a side
        /// table's atomics per add and per invalidate, and the cycle it makes
        /// (loop → mode → timer → loop) is always broken by one of those exits.
        var owner: Loop?
        var tolerance: Int64
        /// The period in nanoseconds, 0 for a one-shot timer (a period is at
        /// least 1): an `Int64?` would take 16 bytes, and 8 less brings the
        /// object to 120 bytes, one 128-byte malloc chunk instead of 144.
        private var period: Int64
        var interval: Int64? {
            get { period > 0 ? period : nil }
            set { period = newValue ?? 0 }
        }
        /// How `fireDate` reads as an absolute date; nil until one is set
        /// or read (see `FireDateAnchor`), and again after a relative move.
        var anchor: FireDateAnchor?

        init(fireDate: Int64, interval: Int64?, tolerance: Int64) {
            self.fireDate = fireDate
            self.period = interval ?? 0
            self.tolerance = tolerance
        }
    }

    /// The placements and the state, inline (see `TimerStorage`).
    let storage: TimerStorage
    /// The modes the timer is in and its position in each mode's heaps.
    /// Guarded by the owner loop's lock, not by `state`: it changes only
    /// with the modes' heaps, under that lock.
    var placements: TimerPlacements {
        @inline(__always) unsafeAddress { UnsafePointer(storage.placements) }
        @inline(__always) unsafeMutableAddress { storage.placements }
    }
    /// The lock that guards the timer's dates, validity and owner: a view,
    /// shaped like `HarborLock`.
    var state: TimerStateLock { TimerStateLock(timer: .passUnretained(self)) }
    let handler: @Sendable (LoopTimer) -> Void
    let label: String

    /// A timer first due `delay` from now.
    /// - Parameters:
    ///   - delay: time until the first fire date (negative counts as zero).
    ///   - interval: `nil` for a one-shot timer; otherwise the period.
    ///   - tolerance: how late the loop may fire it to save wake-ups.
    ///   - label: a name for ``Loop/description``.
    ///   - handler: called on the loop's thread with the timer.
    /// **CF equivalent:** `CFRunLoopTimerCreateWithHandler(…, CFAbsoluteTimeGetCurrent() + delay, …)`,
    /// `+[NSTimer timerWithTimeInterval:repeats:block:]`.
    public convenience init(
        after delay: Duration, repeating interval: Duration? = nil, tolerance: Duration = .zero,
        label: String = "timer", _ handler: @escaping @Sendable (LoopTimer) -> Void
    ) {
        self.init(fire: MonotonicInstant.now.adding(delay).nanoseconds, anchor: nil,
                  interval: interval, tolerance: tolerance, label: label, handler)
    }

    /// The one initializer: a first fire date on CLOCK_MONOTONIC and how it
    /// reads as an absolute date.
    init(
        fire: Int64, anchor: FireDateAnchor?, interval: Duration?, tolerance: Duration,
        label: String, _ handler: @escaping @Sendable (LoopTimer) -> Void
    ) {
        let period = interval.map { max(1, $0.saturatingNanoseconds) }
        var initial = State(fireDate: fire, interval: period, tolerance: tolerance.saturatingNanoseconds)
        initial.anchor = anchor
        storage = TimerStorage(state: initial)
        self.handler = handler
        self.label = label
    }

    /// The period of a repeating timer, `nil` for a one-shot one.
    public var interval: Duration? { state.withLock { $0.interval }.map { .nanoseconds($0) } }

    /// Whether it repeats: true exactly when it was made with an interval
    /// (``interval`` is not `nil`). A one-shot timer is invalidated after it
    /// fires; a repeating one stays, its next fire date on its grid.
    /// **CF equivalent:** `CFRunLoopTimerDoesRepeat`, `CFRunLoopTimerGetInterval(t) > 0`.
    public var repeats: Bool { interval != nil }

    /// How late the loop may fire it. CF: `CFRunLoopTimerGetTolerance`.
    public var tolerance: Duration { .nanoseconds(toleranceNanoseconds) }

    /// The tolerance in nanoseconds, for HarborFoundation's `TimeInterval`
    /// form (whose `tolerance` hides this one inside its module).
    package var toleranceNanoseconds: Int64 { state.withLock { $0.tolerance } }

    /// Sets the tolerance; the loop re-arms its wake-up. CF: `CFRunLoopTimerSetTolerance`.
    public func setTolerance(_ tolerance: Duration) {
        state.withLock { $0.tolerance = tolerance.saturatingNanoseconds; $0.reschedules &+= 1 }
        loop?.timerRescheduled(self)
    }

    /// Moves the next fire date to `delay` from now (a repeating timer's grid
    /// restarts there); the loop re-arms its wake-up, waking if it sleeps.
    /// CF: `CFRunLoopTimerSetNextFireDate`.
    public func setFireDate(after delay: Duration) {
        move(toFire: MonotonicInstant.now.adding(delay).nanoseconds, anchor: nil)
    }

    /// Sets the next fire date (and its absolute reading), then re-arms the loop.
    func move(toFire fire: Int64, anchor: FireDateAnchor?) {
        let stillValid = state.withLock { state -> Bool in
            state.fireDate = fire
            state.anchor = anchor
            state.reschedules &+= 1
            return state.valid
        }
        if stillValid { loop?.timerRescheduled(self) }
    }

    /// Time until the next fire date (zero or less when due); `nil` once invalid.
    public var timeUntilFire: Duration? {
        let (fire, valid) = state.withLock { ($0.fireDate, $0.valid) }
        guard valid else { return nil }
        return .nanoseconds(fire - MonotonicInstant.now.nanoseconds)
    }

    /// The next fire date in CLOCK_MONOTONIC nanoseconds.
    var fireDate: Int64 { state.withLock { $0.fireDate } }

    /// False once invalidated.
    public var isValid: Bool { state.withLock { $0.valid } }

    /// Calls the handler now, on the calling thread, whatever the fire date;
    /// a one-shot timer is then invalidated, a repeating one keeps its
    /// schedule. Does nothing once invalid.
    /// **CF equivalent:** `-[NSTimer fire]` (CF has none).
    public func fire() {
        guard isValid else { return }
        handler(self)
        if !repeats { invalidate() }
    }

    /// Stops the timer for good and removes it from every mode. Any thread.
    /// CF: `CFRunLoopTimerInvalidate`.
    public func invalidate() {
        let loop = state.withLock { state -> Loop? in
            guard state.valid else { return nil }
            state.valid = false
            return state.owner
        }
        loop?.detachTimer(self)
    }

    /// The loop the timer is scheduled in, if any.
    var loop: Loop? { state.withLock { $0.owner } }

    /// Advances a repeating timer past `now` on its grid; returns false for a
    /// one-shot timer. Called under the loop's lock.
    func advance(pastNow now: Int64) -> Bool {
        state.withLock { $0.advance(pastNow: now) }
    }

    public var description: String {
        let (fire, interval, tolerance, valid) = state.withLock {
            ($0.fireDate, $0.interval, $0.tolerance, $0.valid)
        }
        let now = MonotonicInstant.now.nanoseconds
        let next = Duration.nanoseconds(fire - now)
        return "LoopTimer(\(label), next fire in \(next), interval: \(interval.map { "\(Duration.nanoseconds($0))" } ?? "none"), "
            + "tolerance: \(Duration.nanoseconds(tolerance)), valid: \(valid))"
    }
}

extension LoopTimer.State {
    /// Moves a repeating timer's fire date to the first grid point after
    /// `now` (skipping every missed tick); false for a one-shot timer.
    mutating func advance(pastNow now: Int64) -> Bool {
        guard let interval else { return false }
        let missed = fireDate <= now ? (now - fireDate) / interval + 1 : 1
        fireDate &+= missed &* interval
        return true
    }
}
