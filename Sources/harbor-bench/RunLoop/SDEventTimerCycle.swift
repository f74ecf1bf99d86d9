// Harbor — a timers cycle on sd-event's time sources: sd_event_add_time, sd_event_run, unref.
import CSystemd
import Glibc

/// `count` one-shot `CLOCK_MONOTONIC` time sources (accuracy 1 µs, so
/// sd-event does not coalesce them as it would with its 250 ms default)
/// on a fresh `sd_event`, fired by running it, then `count` more added and
/// cancelled by dropping their last reference.
struct SDEventTimerCycle: TimerCycle {
    let name = "sd-event"
    let label = "sd_event_add_time(CLOCK_MONOTONIC, accuracy 1 µs); sd_event_run; sd_event_source_unref"

    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult {
        var result = TimerCycleResult()
        var event: OpaquePointer?
        guard sd_event_new(&event) >= 0, let event else {
            result.gaveUp = "sd_event_new failed"
            return result
        }
        defer { sd_event_unref(event) }
        let fired = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        fired.initialize(to: 0)
        defer { fired.deallocate() }
        let callback: sd_event_time_handler_t = { _, _, userdata in
            userdata!.assumingMemoryBound(to: Int.self).pointee += 1
            return 0
        }
        var sources: [OpaquePointer?] = []
        sources.reserveCapacity(count)
        defer { for source in sources { sd_event_source_unref(source) } }
        // sd-event's times are microseconds; the cycle's dates, nanoseconds.
        func addAll(start: Int64) -> Bool {
            for index in 0..<count {
                var source: OpaquePointer?
                let fire = UInt64(start + order.fireSlot(index) * spacing) / 1000
                guard sd_event_add_time(event, &source, CLOCK_MONOTONIC, fire, 1, callback, fired) >= 0 else { return false }
                sources.append(source)
            }
            return true
        }

        var lastFire: Int64 = 0
        var addedAll = false
        let add = measurePhase {
            let start = nowNanoseconds()
            addedAll = addAll(start: start)
            lastFire = start + Int64(count) * spacing
        }
        guard addedAll else {
            result.gaveUp = "add: sd_event_add_time failed"
            return result
        }
        result.add = add

        sleepUntil(lastFire + 1_000_000)
        let fire = measurePhase {
            while fired.pointee < count && nowNanoseconds() < deadline {
                guard sd_event_run(event, UInt64(max(0, deadline - nowNanoseconds())) / 1000) >= 0 else { break }
            }
        }
        guard fired.pointee == count else {
            result.gaveUp = "fire: \(fired.pointee) of \(count) fired"
            return result
        }
        result.fire = fire
        for source in sources { sd_event_source_unref(source) }  // untimed: the fired sources
        sources.removeAll(keepingCapacity: true)

        let addForCancel = measurePhase { addedAll = addAll(start: nowNanoseconds()) }
        guard addedAll else {
            result.gaveUp = "add for cancel: sd_event_add_time failed"
            return result
        }
        result.addForCancel = addForCancel
        let cancel = measurePhase {
            for step in 0..<count {
                let index = order.cancelled(step)
                sd_event_source_unref(sources[index])
                sources[index] = nil
            }
        }
        result.cancel = cancel
        return result
    }
}
