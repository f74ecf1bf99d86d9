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
    /// (distinct; added in `order`'s fire order), waits (untimed) until all
    /// are due, runs the loop until all fired; then adds `count` more the same
    /// way and invalidates them all in `order`'s cancel order. Gives up at
    /// `deadline` (monotonic ns).
    func run(count: Int, spacing: Int64, order: TimerOrder, deadline: Int64) -> TimerCycleResult
}

/// In which order a cycle's timers are added and cancelled. Made once per
/// size and shared by both implementations, so they do identical work.
struct TimerOrder: Sendable {
    /// `ascending` or `random`: a label for tables and RESULT lines.
    let name: String
    /// `fireSlot[i]`: the i-th timer added fires `fireSlot[i] · spacing`
    /// after the phase starts; nil means `i` (ascending).
    let fireSlots: [Int32]?
    /// `cancelOrder[k]`: which timer (by adding position) is cancelled k-th;
    /// nil means the adding order.
    let cancelOrder: [Int32]?

    @inline(__always) func fireSlot(_ index: Int) -> Int64 { Int64(fireSlots?[index] ?? Int32(index)) }
    @inline(__always) func cancelled(_ step: Int) -> Int { cancelOrder.map { Int($0[step]) } ?? step }

    /// Fire dates ascending in adding order, cancelled in adding order: CF's
    /// best case (each insert appends, each invalidate finds its timer first).
    static let ascending = TimerOrder(name: "ascending", fireSlots: nil, cancelOrder: nil)

    /// Distinct fire dates added in a seeded random order, cancelled in
    /// another seeded random order: what an application's timeouts look like.
    static func random(count: Int, seed: UInt64) -> TimerOrder {
        var generator = SeededGenerator(seed: seed)
        return TimerOrder(name: "random", fireSlots: permutation(count, &generator),
                          cancelOrder: permutation(count, &generator))
    }

    private static func permutation(_ count: Int, _ generator: inout SeededGenerator) -> [Int32] {
        var values = (0..<count).map { Int32($0) }
        values.shuffle(using: &generator)
        return values
    }
}

/// SplitMix64: a small seeded generator, so every run shuffles alike.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Counts timer callbacks; shared by the handlers of a cycle.
///
/// A plain integer, as the C floor's: a cycle's handlers run on the loop's
/// thread, and the cycle reads the count on that same thread between runs.
/// (An atomic add is a locked instruction, a full barrier on x86: it would
/// time the counter into every fire of the run loops and not of the floor.)
final class FireCounter: @unchecked Sendable {
    // @unchecked: `count` is touched only by the thread running the cycle.
    private var count = 0
    func increment() { count &+= 1 }
    var value: Int { count }
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
