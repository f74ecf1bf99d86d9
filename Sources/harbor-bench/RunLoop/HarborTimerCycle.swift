// Harbor — a timers cycle on a Harbor Loop: LoopTimer, Loop.add, run, invalidate.
import Harbor

/// `count` one-shot `LoopTimer`s added to `.default` of the thread's loop,
/// fired by running the loop, then `count` more added and invalidated.
struct HarborTimerCycle: TimerCycle {
    let name = "harbor"
    let label = "LoopTimer(after:) + Loop.add(_:forMode: .default); loop.run(mode:timeout:); invalidate()"

    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult {
        let counter = FireCounter()
        var loop = HarborTimers(loop: .current, counter: counter, handler: { _ in counter.increment() },
                                order: order, spacing: spacing)
        return runTimerCycle(on: &loop, count: count, spacing: spacing, order: order, deadline: deadline)
    }
}

/// The thread's `Loop` as the cycle drives it.
private struct HarborTimers: TimerObjectLoop {
    let loop: Loop
    let counter: FireCounter
    /// One closure for every timer, as the C heap passes one callback and
    /// one userdata: a closure made per timer would time a context
    /// allocation per add and its cache miss per fire, not the timers.
    let handler: @Sendable (LoopTimer) -> Void
    let order: TimerOrder
    let spacing: Int64

    func startAdding() {}

    func add(_ index: Int) -> LoopTimer {
        let timer = LoopTimer(after: .nanoseconds(order.fireSlot(index) * spacing), handler)
        loop.add(timer, forMode: .default)
        return timer
    }

    func run(forNanoseconds nanoseconds: Int64) {
        _ = loop.run(mode: .default, timeout: .nanoseconds(nanoseconds), returnAfterSourceHandled: false)
    }

    func invalidate(_ timer: LoopTimer) { timer.invalidate() }
}
