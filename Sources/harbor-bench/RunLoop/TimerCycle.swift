// Harbor — what one timers cycle measures: add all, fire all, add again, cancel all.

/// One phase's cost: wall time and the thread's CPU time, in nanoseconds.
struct PhaseCost: Sendable {
    var wall: Int64
    var cpu: Int64
}

/// The phases of one cycle of `count` timers, in the order they run. A phase
/// that ran out of time budget is `nil`, and so is every phase after it.
struct TimerCycleResult: Sendable {
    var add: PhaseCost?
    var fire: PhaseCost?
    var addForCancel: PhaseCost?
    var cancel: PhaseCost?
    /// Where the cycle gave up, e.g. "fire: 412,000 of 1,000,000 fired".
    var gaveUp: String?

    /// Add + fire + add again + cancel; nil unless every phase finished.
    var total: PhaseCost? {
        guard let add, let fire, let addForCancel, let cancel else { return nil }
        return PhaseCost(wall: add.wall + fire.wall + addForCancel.wall + cancel.wall,
                         cpu: add.cpu + fire.cpu + addForCancel.cpu + cancel.cpu)
    }
}

/// One run-loop implementation's way of doing a cycle. `run` is called on a
/// fresh thread, which exits afterwards, so every cycle starts from an empty loop.
protocol TimerCycle: Sendable {
    /// Short id for tables and RESULT lines, e.g. `harbor`.
    var name: String { get }
    /// What it does, in a few words.
    var label: String { get }
    /// Adds `count` one-shot timers whose fire dates are `spacing` ns apart
    /// (ascending, distinct), waits (untimed) until all are due, runs the
    /// loop until all fired; then adds `count` more and invalidates them all
    /// in the order they were added. Gives up at `deadline` (monotonic ns).
    func run(count: Int, spacing: Int64, deadline: Int64) -> TimerCycleResult
}

/// Counts timer callbacks; shared by the handlers of a cycle.
final class FireCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Times `body` in wall and thread CPU time.
@inline(__always)
func measurePhase(_ body: () -> Void) -> PhaseCost {
    let cpu = threadCPUNanoseconds()
    let wall = nowNanoseconds()
    body()
    return PhaseCost(wall: nowNanoseconds() - wall, cpu: threadCPUNanoseconds() - cpu)
}

import Glibc
import Synchronization
