// Harbor — where a timer sits: its modes and its position in each mode's heaps.

/// A timer's membership in one mode and its positions in that mode's heaps.
///
/// - `fireIndex ≥ 0`: scheduled, at that position of the mode's fire date
///   heap (the strict one if `hardIndex < 0`, else the lenient one).
/// - `hardIndex ≥ 0`: the timer has a tolerance and also sits in the mode's
///   hard deadline heap.
/// - `fireIndex < 0`: a member that is not scheduled — a one-shot timer that
///   fired and waits, during its callout, to be invalidated (or re-armed by
///   its handler).
struct TimerPlacement {
    // unowned(unsafe): a mode's `ModeTimers` lives as long as its loop's
    // `ModeState`, and every placement is dropped (under the loop's lock, or
    // at teardown before the modes are released) before that.
    unowned(unsafe) let timers: ModeTimers
    // Int32: the placement (and an optional one) takes 16 bytes, so it sits
    // beside the object header in the timer's first cache line. A mode of
    // 2³¹ timers would need hundreds of gigabytes; past that `setIndex` traps.
    private var fire: Int32 = -1
    private var hard: Int32 = -1

    init(_ timers: ModeTimers) { self.timers = timers }

    var fireIndex: Int {
        get { Int(fire) }
        set { fire = Int32(newValue) }
    }

    var hardIndex: Int {
        get { Int(hard) }
        set { hard = Int32(newValue) }
    }

    var isScheduled: Bool { fire >= 0 }
}

/// The placements of one timer: inline for the first mode (almost every
/// timer is in one), an array only for the others. No allocation for a timer
/// in one mode; lookups compare object identities, no hashing. `first` is
/// stored before `others`, so it lies right after the timer's object header.
struct TimerPlacements {
    private(set) var first: TimerPlacement?
    private(set) var others: [TimerPlacement] = []

    var isEmpty: Bool { first == nil }

    /// The placement in `timers`' mode, if the timer is a member.
    @inline(__always)
    func placement(in timers: ModeTimers) -> TimerPlacement? {
        if let first, first.timers === timers { return first }
        return others.first { $0.timers === timers }
    }

    /// Records a move inside one of `timers`' heaps. Called by the heaps'
    /// sifting, so it must be cheap: the first placement is checked inline.
    @inline(__always)
    mutating func setIndex(_ index: Int, in timers: ModeTimers, hard: Bool) {
        if first?.timers === timers {
            if hard { first!.hardIndex = index } else { first!.fireIndex = index }
            return
        }
        setOtherIndex(index, in: timers, hard: hard)
    }

    private mutating func setOtherIndex(_ index: Int, in timers: ModeTimers, hard: Bool) {
        for slot in others.indices where others[slot].timers === timers {
            if hard { others[slot].hardIndex = index } else { others[slot].fireIndex = index }
            return
        }
    }

    /// Adds a membership (not yet scheduled). Returns false if present.
    mutating func add(_ timers: ModeTimers) -> Bool {
        guard placement(in: timers) == nil else { return false }
        if first == nil { first = TimerPlacement(timers) } else { others.append(TimerPlacement(timers)) }
        return true
    }

    /// Drops the membership in `timers`' mode (the heaps must already be left).
    mutating func remove(_ timers: ModeTimers) {
        if first?.timers === timers {
            first = others.isEmpty ? nil : others.removeFirst()
        } else {
            others.removeAll { $0.timers === timers }
        }
    }

    /// Drops every membership without touching the heaps: teardown only.
    mutating func removeAll() {
        first = nil
        others = []
    }

    /// Every mode the timer is a member of.
    var all: [ModeTimers] {
        guard let first else { return [] }
        return [first.timers] + others.map(\.timers)
    }

    /// Calls `body` with each mode the timer is a member of, without
    /// allocating for the usual single mode.
    @inline(__always)
    func forEach(_ body: (ModeTimers) -> Void) {
        guard let first else { return }
        body(first.timers)
        for other in others { body(other.timers) }
    }
}
