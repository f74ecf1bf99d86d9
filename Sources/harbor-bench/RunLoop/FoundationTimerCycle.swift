// Harbor — a timers cycle on Foundation's RunLoop: Timer, RunLoop.add, run, invalidate.
import Foundation

/// `count` one-shot Foundation `Timer`s added to `.default` of the thread's
/// `RunLoop`, fired by running it, then `count` more added and invalidated.
struct FoundationTimerCycle: TimerCycle {
    let name = "foundation"
    let label = "Timer(fire:interval:repeats:block:) + RunLoop.add(_:forMode: .default); run(mode:before:); invalidate()"

    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult {
        var result = TimerCycleResult()
        let loop = RunLoop.current
        let counter = FireCounter()
        var timers: [Timer] = []
        timers.reserveCapacity(count)
        let spacingSeconds = Double(spacing) / 1e9
        // Date's resolution near now is about 0.12 µs, so fire dates at
        // least that far apart stay distinct.
        func deadlineDate() -> Date { Date(timeIntervalSinceNow: Double(deadline - nowNanoseconds()) / 1e9) }

        var lastFire: Int64 = 0
        var added = 0
        let add = measurePhase {
            let start = nowNanoseconds()
            let base = Date().timeIntervalSinceReferenceDate
            while added < count {
                let fire = Date(timeIntervalSinceReferenceDate: base + Double(order.fireSlot(added)) * spacingSeconds)
                let timer = Timer(fire: fire, interval: 0, repeats: false) { _ in counter.increment() }
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

        sleepUntil(lastFire + 1_000_000)
        let fire = measurePhase {
            while counter.value < count && nowNanoseconds() < deadline {
                _ = loop.run(mode: .default, before: deadlineDate())
            }
        }
        guard counter.value == count else {
            for timer in timers { timer.invalidate() }
            result.gaveUp = "fire: \(counter.value) of \(count) fired"
            return result
        }
        result.fire = fire
        timers.removeAll(keepingCapacity: true)

        added = 0
        let addForCancel = measurePhase {
            let base = Date().timeIntervalSinceReferenceDate
            while added < count {
                let fire = Date(timeIntervalSinceReferenceDate: base + Double(order.fireSlot(added)) * spacingSeconds)
                let timer = Timer(fire: fire, interval: 0, repeats: false) { _ in counter.increment() }
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
            for timer in timers { timer.invalidate() }  // the rest (invalidating twice is harmless)
            result.gaveUp = "cancel: \(cancelled) of \(count) cancelled"
            return result
        }
        result.cancel = cancel
        return result
    }
}
