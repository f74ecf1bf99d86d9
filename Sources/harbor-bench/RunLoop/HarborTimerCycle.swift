// Harbor — a timers cycle on a Harbor Loop: LoopTimer, Loop.add, run, invalidate.
import Harbor

/// `count` one-shot `LoopTimer`s added to `.default` of the thread's loop,
/// fired by running the loop, then `count` more added and invalidated.
struct HarborTimerCycle: TimerCycle {
    let name = "harbor"
    let label = "LoopTimer(after:) + Loop.add(_:forMode: .default); loop.run(mode:timeout:); invalidate()"

    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult {
        var result = TimerCycleResult()
        let loop = Loop.current
        let counter = FireCounter()
        var timers: [LoopTimer] = []
        timers.reserveCapacity(count)

        // Add: distinct fire dates `spacing` apart, in `order`.
        var lastFire: Int64 = 0
        var added = 0
        let add = measurePhase {
            let start = nowNanoseconds()
            while added < count {
                let timer = LoopTimer(after: .nanoseconds(order.fireSlot(added) * spacing)) { _ in counter.increment() }
                loop.add(timer, forMode: .default)
                timers.append(timer)
                added += 1
                if added & 1023 == 0 && nowNanoseconds() > deadline { break }
            }
            lastFire = start + Int64(count) * spacing
        }
        guard added == count else {
            for timer in timers { timer.invalidate() }
            result.gaveUp = "add: \(added) of \(count) added"
            return result
        }
        result.add = add

        // Fire: every timer is due; run until the last one fired.
        sleepUntil(lastFire + 1_000_000)
        let fire = measurePhase {
            while counter.value < count {
                let left = deadline - nowNanoseconds()
                if left <= 0 { break }
                _ = loop.run(mode: .default, timeout: .nanoseconds(left), returnAfterSourceHandled: false)
            }
        }
        guard counter.value == count else {
            for timer in timers { timer.invalidate() }
            result.gaveUp = "fire: \(counter.value) of \(count) fired"
            return result
        }
        result.fire = fire
        timers.removeAll(keepingCapacity: true)  // untimed: releasing the fired timers

        // Add again, then cancel all in `order`.
        added = 0
        let addForCancel = measurePhase {
            while added < count {
                let timer = LoopTimer(after: .nanoseconds(order.fireSlot(added) * spacing)) { _ in counter.increment() }
                loop.add(timer, forMode: .default)
                timers.append(timer)
                added += 1
                if added & 1023 == 0 && nowNanoseconds() > deadline { break }
            }
        }
        guard added == count else {
            for timer in timers { timer.invalidate() }
            result.gaveUp = "add for cancel: \(added) of \(count) added"
            return result
        }
        result.addForCancel = addForCancel
        var cancelled = 0
        let cancel = measurePhase {
            while cancelled < count {
                timers[order.cancelled(cancelled)].invalidate()
                cancelled += 1
                if cancelled & 1023 == 0 && nowNanoseconds() > deadline { break }
            }
        }
        guard cancelled == count else {
            result.gaveUp = "cancel: \(cancelled) of \(count) cancelled"
            return result
        }
        result.cancel = cancel
        return result
    }
}
