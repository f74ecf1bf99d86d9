// Harbor — the timers cycle's floor: a plain C 4-ary heap (CHarborTimerFloor), no loop, no locks.
import CHarborTimerFloor

/// `count` timers in a C 4-ary heap: malloc'd structs that know their heap
/// position, fired by popping the minimum and calling a function pointer,
/// cancelled at their known position. What the data structure alone costs.
struct FloorTimerCycle: TimerCycle {
    let name = "c-heap"
    let label = "plain C 4-ary heap: malloc + insert; pop due + call + free; remove at index + free"

    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult {
        var result = TimerCycleResult()
        guard let heap = charbor_floor_heap_new() else {
            result.gaveUp = "out of memory"
            return result
        }
        defer { charbor_floor_heap_free(heap) }
        let fired = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        fired.initialize(to: 0)
        defer { fired.deallocate() }
        let callback: charbor_floor_callback = { userdata in
            userdata!.assumingMemoryBound(to: Int.self).pointee += 1
        }
        var timers: [OpaquePointer] = []
        timers.reserveCapacity(count)

        var lastFire: Int64 = 0
        let add = measurePhase {
            let start = nowNanoseconds()
            for index in 0..<count {
                timers.append(charbor_floor_heap_add(heap, start + order.fireSlot(index) * spacing, callback, fired)!)
            }
            lastFire = start + Int64(count) * spacing
        }
        result.add = add

        sleepUntil(lastFire + 1_000_000)
        let fire = measurePhase {
            _ = charbor_floor_heap_fire_due(heap, nowNanoseconds())
        }
        guard fired.pointee == count else {
            result.gaveUp = "fire: \(fired.pointee) of \(count) fired"
            return result
        }
        result.fire = fire
        timers.removeAll(keepingCapacity: true)

        let addForCancel = measurePhase {
            let start = nowNanoseconds()
            for index in 0..<count {
                timers.append(charbor_floor_heap_add(heap, start + order.fireSlot(index) * spacing, callback, fired)!)
            }
        }
        result.addForCancel = addForCancel
        let cancel = measurePhase {
            for step in 0..<count { charbor_floor_heap_cancel(heap, timers[order.cancelled(step)]) }
        }
        result.cancel = cancel
        return result
    }
}
