// HarborFoundation — NSRunLoop's Date and TimeInterval forms on Harbor's loop, so Foundation code ports by renaming.
//
// The core (HarborRunLoop) stays free of Foundation: it speaks `Duration`
// and `ContinuousClock.Instant`. This module adds the forms Foundation code
// is written in — `Date`, `TimeInterval`, `RunLoop.Mode` — with NSRunLoop's
// names and behaviour (swift-corelibs-foundation's RunLoop.swift is the
// reference), so `RunLoop` → `Loop`, `Timer` → `LoopTimer` and
// `RunLoop.Mode` → `LoopMode` is the whole port.
import Foundation
import HarborRunLoop

extension Loop {
    /// Runs `.default` pass after pass until `limitDate`, or until the mode
    /// has nothing left to run. Only the loop's own thread may call it.
    /// **Foundation equivalent:** `RunLoop.run(until:)`, `-[NSRunLoop runUntilDate:]`.
    public func run(until limitDate: Date) {
        while run(mode: .default, before: limitDate) && limitDate > Date() {}
    }

    /// Runs one pass of `mode` until a source (not a timer) was handled,
    /// `stop()`, or `limitDate` (`.distantFuture`: no limit).
    /// - Returns: false only if the mode had nothing to run when called.
    /// Only the loop's own thread may call it (NSRunLoop returns false on
    /// another thread; Harbor traps, as every run from the wrong thread does).
    /// **Foundation equivalent:** `RunLoop.run(mode:before:)`, `-[NSRunLoop runMode:beforeDate:]`.
    @discardableResult
    public func run(mode: LoopMode, before limitDate: Date) -> Bool {
        run(mode: mode, before: Self.deadline(limitDate))
    }

    /// Runs one pass of `mode` until a source was handled or `limitDate`,
    /// without telling whether anything ran. Only the loop's own thread.
    /// **Foundation equivalent:** `RunLoop.acceptInput(forMode:before:)`.
    public func acceptInput(forMode mode: LoopMode, before limitDate: Date) {
        let timeout = Self.deadline(limitDate).map { ContinuousClock.now.duration(to: $0) }
        _ = run(mode: mode, timeout: timeout, returnAfterSourceHandled: true)
    }

    /// Runs what is due in `mode` (one non-blocking pass, returning after a
    /// handled source), then tells when the mode's next timer fires:
    /// `nil` if the mode has nothing left to run, `.distantFuture` if it has
    /// no timer. Only the loop's own thread may call it.
    /// **Foundation equivalent:** `RunLoop.limitDate(forMode:)`, `-[NSRunLoop limitDateForMode:]`;
    /// `nextTimerFireDate(forMode:)` is the query alone (`CFRunLoopGetNextTimerFireDate`).
    public func limitDate(forMode mode: LoopMode) -> Date? {
        _ = run(mode: mode, timeout: .zero, returnAfterSourceHandled: true)
        if hasNothingToRun(inMode: mode) { return nil }
        guard let timer = nextTimer(forMode: mode) else { return .distantFuture }
        return timer.fireDate
    }

    /// Runs `block` after `delay` seconds in `modes` (default: `.default`),
    /// as a one-shot timer on this loop; `LoopTimer.invalidate()` on the
    /// returned timer cancels it.
    /// **Foundation equivalent:** `performSelector:withObject:afterDelay:inModes:`,
    /// `cancelPreviousPerformRequestsWithTarget:`.
    @discardableResult
    public func perform(
        after delay: TimeInterval, inModes modes: [LoopMode] = [.default], _ block: @escaping @Sendable () -> Void
    ) -> LoopTimer {
        perform(after: Duration(timeInterval: delay), inModes: modes, block)
    }

    /// The `ContinuousClock` deadline of a `Date`, by its offset from now;
    /// nil (no deadline) for a date further than CF's limit (about 16
    /// years: `.distantFuture`) or not a number.
    static func deadline(_ date: Date) -> ContinuousClock.Instant? {
        let interval = date.timeIntervalSinceNow
        guard interval.isFinite, interval <= maximumInterval else { return nil }
        return ContinuousClock.now + Duration(timeInterval: interval)
    }

    /// CF's `TIMER_INTERVAL_LIMIT`: longer waits count as forever.
    static let maximumInterval: TimeInterval = 504_911_232.0
}

extension Duration {
    /// `seconds` as a duration: negative counts as zero, and NaN or more
    /// than CF's limit as that limit.
    init(timeInterval seconds: TimeInterval) {
        guard seconds > 0 else { self = .zero; return }
        self = .seconds(seconds.isFinite ? min(seconds, Loop.maximumInterval) : Loop.maximumInterval)
    }
}

extension LoopMode {
    /// The Harbor mode of a Foundation mode: `.default` and `.common` map to
    /// their Harbor names, any other by its raw value.
    public init(_ mode: RunLoop.Mode) {
        switch mode {
        case .default: self = .default
        case .common: self = .common
        default: self.init(mode.rawValue)
        }
    }
}

extension RunLoop.Mode {
    /// The Foundation mode of a Harbor mode (the reverse of `LoopMode.init(_:)`).
    public init(_ mode: LoopMode) {
        switch mode {
        case .default: self = .default
        case .common: self = .common
        default: self.init(mode.name)
        }
    }
}
