// Harbor — a timers cycle on Foundation's RunLoop: Timer, RunLoop.add, run, invalidate.
import Foundation

/// `count` one-shot Foundation `Timer`s added to `.default` of the thread's
/// `RunLoop`, fired by running it, then `count` more added and invalidated.
struct FoundationTimerCycle: TimerCycle {
    let name = "foundation"
    let label = "Timer(fire:interval:repeats:block:) + RunLoop.add(_:forMode: .default); run(mode:before:); invalidate()"

    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult {
        let counter = FireCounter()
        var loop = FoundationTimers(loop: .current, counter: counter, block: { _ in counter.increment() }, order: order,
                                    spacingSeconds: Double(spacing) / 1e9)
        return runTimerCycle(on: &loop, count: count, spacing: spacing, order: order, deadline: deadline)
    }
}

/// The thread's `RunLoop` as the cycle drives it.
private struct FoundationTimers: TimerObjectLoop {
    let loop: RunLoop
    let counter: FireCounter
    /// One block for every timer, as Harbor's cycle and the C floor share one handler.
    let block: @Sendable (Timer) -> Void
    let order: TimerOrder
    // Date's resolution near now is about 0.12 µs, so fire dates at
    // least that far apart stay distinct.
    let spacingSeconds: Double
    /// The add phase's start, as a reference date.
    var base: TimeInterval = 0

    mutating func startAdding() { base = Date().timeIntervalSinceReferenceDate }

    func add(_ index: Int) -> Timer {
        let fire = Date(timeIntervalSinceReferenceDate: base + Double(order.fireSlot(index)) * spacingSeconds)
        let timer = Timer(fire: fire, interval: 0, repeats: false, block: block)
        loop.add(timer, forMode: .default)
        return timer
    }

    func run(forNanoseconds nanoseconds: Int64) {
        _ = loop.run(mode: .default, before: Date(timeIntervalSinceNow: Double(nanoseconds) / 1e9))
    }

    func invalidate(_ timer: Timer) { timer.invalidate() }
}
