// HarborFoundation — NSTimer's initializers and properties on LoopTimer, in Date and TimeInterval.
import Foundation
import HarborRunLoop

extension LoopTimer {
    /// A timer first due `interval` seconds from now, then every `interval`
    /// if it repeats (an interval of zero or less means 0.1 ms, as on
    /// Darwin). Schedule it with `Loop.add(_:forMode:)`.
    /// **Foundation equivalent:** `Timer(timeInterval:repeats:block:)`,
    /// `+[NSTimer timerWithTimeInterval:repeats:block:]` (Darwin's: the first
    /// fire is one interval away; swift-corelibs-foundation fires at once).
    public convenience init(timeInterval interval: TimeInterval, repeats: Bool, block: @escaping @Sendable (LoopTimer) -> Void) {
        let period = Self.period(interval)
        self.init(after: period, repeating: repeats ? period : nil, label: "timer", block)
    }

    /// A timer first due at `date`, then every `interval` seconds if it
    /// repeats (on the grid `date + k·interval`). A date past fires at the
    /// loop's next pass. Schedule it with `Loop.add(_:forMode:)`.
    /// **Foundation equivalent:** `Timer(fire:interval:repeats:block:)`,
    /// `-[NSTimer initWithFireDate:interval:repeats:block:]`.
    public convenience init(fire date: Date, interval: TimeInterval, repeats: Bool, block: @escaping @Sendable (LoopTimer) -> Void) {
        self.init(atWallSeconds: date.timeIntervalSinceReferenceDate, now: Date().timeIntervalSinceReferenceDate,
                  repeating: repeats ? Self.period(interval) : nil, tolerance: .zero, label: "timer", block)
    }

    /// Makes a timer like ``init(timeInterval:repeats:block:)`` and schedules
    /// it in `.default` on the calling thread's loop.
    /// **Foundation equivalent:** `Timer.scheduledTimer(withTimeInterval:repeats:block:)`.
    @discardableResult
    public static func scheduledTimer(
        withTimeInterval interval: TimeInterval, repeats: Bool, block: @escaping @Sendable (LoopTimer) -> Void
    ) -> LoopTimer {
        let timer = LoopTimer(timeInterval: interval, repeats: repeats, block: block)
        Loop.current.add(timer, forMode: .default)
        return timer
    }

    /// The next fire date. A date that was set reads back as set (to the
    /// precision of a `Double` of seconds), and a repeating timer's later
    /// dates lie on its grid; setting it moves the timer (a repeating
    /// timer's grid restarts there) and re-arms its loop. Any thread.
    /// **Foundation equivalent:** `Timer.fireDate`, `CFRunLoopTimerGet/SetNextFireDate`.
    public var fireDate: Date {
        get { Date(timeIntervalSinceReferenceDate: nextFireDate(wallNow: { Date().timeIntervalSinceReferenceDate })) }
        set { setNextFireDate(wallSeconds: newValue.timeIntervalSinceReferenceDate, now: Date().timeIntervalSinceReferenceDate) }
    }

    /// The period in seconds; 0 for a one-shot timer.
    /// **Foundation equivalent:** `Timer.timeInterval`.
    public var timeInterval: TimeInterval {
        interval.map(Self.seconds) ?? 0
    }

    /// How late the loop may fire the timer, in seconds (negative counts as
    /// zero). Reading it where the type is not otherwise known needs
    /// `as TimeInterval`: the core's `tolerance` is a `Duration`.
    /// **Foundation equivalent:** `Timer.tolerance`.
    public var tolerance: TimeInterval {
        get { TimeInterval(toleranceNanoseconds) / 1e9 }
        set { setTolerance(Duration(timeInterval: newValue)) }
    }

    /// NSTimer's period: at least 0.1 ms.
    private static func period(_ interval: TimeInterval) -> Duration {
        interval > 0 ? Duration(timeInterval: interval) : .microseconds(100)
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
