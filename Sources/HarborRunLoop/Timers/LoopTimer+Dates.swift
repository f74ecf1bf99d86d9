// Harbor — absolute fire dates: a timer created at, read as and moved to a point in time (CF's CFAbsoluteTime forms).
import HarborPorts
import HarborSystem

/// How a timer's fire date, kept in CLOCK_MONOTONIC nanoseconds, reads as an
/// absolute date: the date it was last set to (or first read as) and the
/// monotonic instant that date became. A date that was set therefore reads
/// back exactly, and a repeating timer's later dates read exactly as
/// `date + k·interval`, whatever the clocks did meanwhile. CF keeps the date
/// it was given the same way (`_nextFireDate` beside `_fireTSR`).
///
/// Made only when an absolute date is set or read (a timer made with a
/// `Duration` has none), and never changed: a new reading makes a new one.
final class FireDateAnchor: Sendable {
    /// The CLOCK_MONOTONIC nanoseconds the dates below stand for.
    let monotonic: Int64
    let continuous: ContinuousClock.Instant?
    /// Seconds on a wall clock, from an epoch of the caller's choosing
    /// (HarborFoundation: `Date`'s reference date).
    let wallSeconds: Double?

    init(monotonic: Int64, continuous: ContinuousClock.Instant?, wallSeconds: Double?) {
        self.monotonic = monotonic
        self.continuous = continuous
        self.wallSeconds = wallSeconds
    }

    /// The continuous date of the monotonic `fire`, along the timer's grid.
    func continuous(at fire: Int64) -> ContinuousClock.Instant? {
        continuous.map { $0.advanced(by: .nanoseconds(fire &- monotonic)) }
    }

    /// The wall-clock seconds of the monotonic `fire`, along the timer's grid.
    func wallSeconds(at fire: Int64) -> Double? {
        wallSeconds.map { $0 + Double(fire &- monotonic) / 1e9 }
    }

    /// The CLOCK_MONOTONIC nanoseconds of a `ContinuousClock` instant, by
    /// its offset from now (negative offsets count as now, as CF treats a
    /// past fire date).
    static func monotonic(of date: ContinuousClock.Instant) -> Int64 {
        MonotonicInstant.now.adding(ContinuousClock.now.duration(to: date)).nanoseconds
    }
}

extension LoopTimer {
    /// A timer first due at `date`.
    /// - Parameters:
    ///   - date: the first fire date; a date already past fires at the
    ///     loop's next pass.
    ///   - interval: `nil` for a one-shot timer; otherwise the period, and
    ///     later fire dates are `date + k·interval`.
    ///   - tolerance: how late the loop may fire it to save wake-ups.
    ///   - label: a name for ``Loop/description``.
    ///   - handler: called on the loop's thread with the timer.
    /// **CF equivalent:** `CFRunLoopTimerCreateWithHandler(…, fireDate, interval, …)`,
    /// `-[NSTimer initWithFireDate:interval:repeats:block:]`.
    public convenience init(
        at date: ContinuousClock.Instant, repeating interval: Duration? = nil, tolerance: Duration = .zero,
        label: String = "timer", _ handler: @escaping @Sendable (LoopTimer) -> Void
    ) {
        let fire = FireDateAnchor.monotonic(of: date)
        self.init(fire: fire, anchor: FireDateAnchor(monotonic: fire, continuous: date, wallSeconds: nil),
                  interval: interval, tolerance: tolerance, label: label, handler)
    }

    /// The next fire date, on the clock of `Loop.run(until:)`. A date set
    /// with ``setNextFireDate(_:)`` or ``init(at:repeating:tolerance:label:_:)``
    /// reads back exactly, and a repeating timer's later ones exactly on its
    /// grid. Once the timer is invalid, its last fire date.
    /// **CF equivalent:** `CFRunLoopTimerGetNextFireDate`, `-[NSTimer fireDate]`.
    public var nextFireDate: ContinuousClock.Instant {
        state.withLock { state -> ContinuousClock.Instant in
            let fire = state.fireDate
            if let date = state.anchor?.continuous(at: fire) { return date }
            // First reading: tie the monotonic date to the continuous clock
            // now, and keep the tie so later readings agree with this one.
            let date = ContinuousClock.now.advanced(by: .nanoseconds(fire &- MonotonicInstant.now.nanoseconds))
            state.anchor = FireDateAnchor(monotonic: fire, continuous: date, wallSeconds: state.anchor?.wallSeconds(at: fire))
            return date
        }
    }

    /// Moves the next fire date to `date` (a repeating timer's grid restarts
    /// there); the loop re-arms its wake-up, waking if it sleeps. A date
    /// already past fires at the loop's next pass. Any thread.
    /// **CF equivalent:** `CFRunLoopTimerSetNextFireDate`, `-[NSTimer setFireDate:]`.
    public func setNextFireDate(_ date: ContinuousClock.Instant) {
        let fire = FireDateAnchor.monotonic(of: date)
        move(toFire: fire, anchor: FireDateAnchor(monotonic: fire, continuous: date, wallSeconds: nil))
    }

    // MARK: Wall-clock dates, for HarborFoundation's `Date` forms

    /// A timer first due at `seconds` on a wall clock whose reading now is
    /// `now` (both from the same epoch). HarborFoundation's `Date` initializers.
    package convenience init(
        atWallSeconds seconds: Double, now: Double, repeating interval: Duration?, tolerance: Duration,
        label: String, _ handler: @escaping @Sendable (LoopTimer) -> Void
    ) {
        let fire = Self.monotonic(ofWallSeconds: seconds, now: now)
        self.init(fire: fire, anchor: FireDateAnchor(monotonic: fire, continuous: nil, wallSeconds: seconds),
                  interval: interval, tolerance: tolerance, label: label, handler)
    }

    /// The next fire date as seconds on the wall clock that `now` reads;
    /// exact for a date set with ``setNextFireDate(wallSeconds:now:)``.
    package func nextFireDate(wallNow now: () -> Double) -> Double {
        state.withLock { state -> Double in
            let fire = state.fireDate
            if let seconds = state.anchor?.wallSeconds(at: fire) { return seconds }
            let seconds = now() + Double(fire &- MonotonicInstant.now.nanoseconds) / 1e9
            state.anchor = FireDateAnchor(monotonic: fire, continuous: state.anchor?.continuous(at: fire), wallSeconds: seconds)
            return seconds
        }
    }

    /// Moves the next fire date to `seconds` on a wall clock reading `now`.
    package func setNextFireDate(wallSeconds seconds: Double, now: Double) {
        let fire = Self.monotonic(ofWallSeconds: seconds, now: now)
        move(toFire: fire, anchor: FireDateAnchor(monotonic: fire, continuous: nil, wallSeconds: seconds))
    }

    private static func monotonic(ofWallSeconds seconds: Double, now: Double) -> Int64 {
        let offset = seconds - now
        // A date past, or absurdly far (NaN, beyond Int64 nanoseconds), is clamped.
        guard offset > 0 else { return MonotonicInstant.now.nanoseconds }
        let nanoseconds = offset < 9e9 ? Int64(offset * 1e9) : Int64.max / 2
        return MonotonicInstant.now.nanoseconds &+ nanoseconds
    }
}

extension Loop {
    /// The earliest fire date among `mode`'s timers, or nil if it has none
    /// (a one-shot timer counts until it fires). Any thread.
    /// **CF equivalent:** `CFRunLoopGetNextTimerFireDate` (which says 0 for none);
    /// `-[NSRunLoop limitDate:]` without its poll (HarborFoundation has that form).
    public func nextTimerFireDate(forMode mode: LoopMode) -> ContinuousClock.Instant? {
        nextTimer(forMode: mode)?.nextFireDate
    }

    /// The timer of `mode` that fires first, if any.
    package func nextTimer(forMode mode: LoopMode) -> LoopTimer? {
        guard mode != .common else { return nil }
        return state.withLockedValue { state in
            guard !state.terminated else { return nil }
            return state.modes[mode]?.timers.earliest
        }
    }
}
