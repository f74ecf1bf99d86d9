// Harbor — the timers cycle of a run loop whose timers are objects (Foundation's Timer, Harbor's LoopTimer).

/// A run loop whose timers are objects it holds until they fire or are
/// invalidated. `runTimerCycle(on:…)` is the one cycle for every such loop,
/// so Foundation and Harbor are timed by the same code and differ only here.
protocol TimerObjectLoop {
    associatedtype Timer
    /// Counts fired timers: every timer's handler increments it.
    var counter: FireCounter { get }
    /// Called as each add phase starts, inside its timing (Foundation takes
    /// its base date here).
    mutating func startAdding()
    /// Makes the `index`-th timer, due `order.fireSlot(index) · spacing`
    /// after the phase started, firing `counter.increment()`, and adds it to
    /// the loop's `.default` mode.
    func add(_ index: Int) -> Timer
    /// Runs the loop in `.default` for at most `nanoseconds`.
    func run(forNanoseconds nanoseconds: Int64)
    func invalidate(_ timer: Timer)
}

/// The cycle `TimerCycle.run` describes, on `loop`. Where it gives up, every timer still held is invalidated
/// (invalidating one twice is harmless) and `gaveUp` says where.
func runTimerCycle<L: TimerObjectLoop>(on loop: inout L, count: Int, spacing: Int64,
                                       order: TimerOrder, deadline: Int64) -> TimerCycleResult {
    let counter = loop.counter
    var result = TimerCycleResult()
    var timers: [L.Timer] = []
    timers.reserveCapacity(count)
    func giveUp(_ reason: String) -> TimerCycleResult {
        for timer in timers { loop.invalidate(timer) }
        result.gaveUp = reason
        return result
    }

    // Add: distinct fire dates `spacing` apart, in `order`.
    var lastFire: Int64 = 0
    var added = 0
    let add = measurePhase {
        let start = nowNanoseconds()
        loop.startAdding()
        added = stepsBefore(deadline, count: count) { timers.append(loop.add($0)) }
        lastFire = start + Int64(count) * spacing
    }
    guard added == count else { return giveUp("add: \(added) of \(count) added") }
    result.add = add

    // Fire: every timer is due; run until the last one fired.
    sleepUntil(lastFire + 1_000_000)
    let fire = measurePhase {
        while counter.value < count {
            let left = deadline - nowNanoseconds()
            if left <= 0 { break }
            loop.run(forNanoseconds: left)
        }
    }
    guard counter.value == count else { return giveUp("fire: \(counter.value) of \(count) fired") }
    result.fire = fire
    timers.removeAll(keepingCapacity: true)  // untimed: releasing the fired timers

    // Add again, then cancel all in `order`.
    let addForCancel = measurePhase {
        loop.startAdding()
        added = stepsBefore(deadline, count: count) { timers.append(loop.add($0)) }
    }
    guard added == count else { return giveUp("add for cancel: \(added) of \(count) added") }
    result.addForCancel = addForCancel
    var cancelled = 0
    // A constant copy (no copying: the storage is shared) lets each element
    // be borrowed for the call instead of retained and released around it,
    // as the C floor passes its plain pointer.
    let held = timers
    let cancel = measurePhase {
        cancelled = stepsBefore(deadline, count: count) { loop.invalidate(held[order.cancelled($0)]) }
    }
    guard cancelled == count else { return giveUp("cancel: \(cancelled) of \(count) cancelled") }
    result.cancel = cancel
    return result
}

/// Runs `step(0)`, `step(1)`, … up to `count` steps, looking at the clock
/// every 1024 steps and stopping once `deadline` passed; returns how many ran.
@inline(__always)
private func stepsBefore(_ deadline: Int64, count: Int, _ step: (Int) -> Void) -> Int {
    var done = 0
    while done < count {
        step(done)
        done += 1
        if done & 1023 == 0 && nowNanoseconds() > deadline { break }
    }
    return done
}
