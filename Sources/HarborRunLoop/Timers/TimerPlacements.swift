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
    // Int32, as the first placement's `firstFire` and `firstHard`: a
    // placement takes 16 bytes. A mode of 2³¹ timers would need hundreds of
    // gigabytes; past that `setIndex` traps.
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
/// in one mode; lookups compare object identities, no hashing.
///
/// The first placement is plain fields, not an optional `TimerPlacement`,
/// and it lies right after the timer's object header: a heap sifting past
/// the timer writes `firstFire` or `firstHard` with one store and no load
/// (the heap entry says whether it is the first placement's), so a move
/// does not wait for the timer's cache line. (Checking the placement's mode
/// first, a load from a cold object on every level of every sift, was most
/// of a sift's time with a million timers.)
struct TimerPlacements {
    /// The first placement's mode, by address (an `unowned(unsafe)`
    /// optional cost a retain and release at every comparison); nil means
    /// no placements at all. Valid as long as `TimerPlacement.timers` is.
    private var firstAddress: UnsafeMutableRawPointer?

    /// The first placement's mode.
    private var firstTimers: ModeTimers? {
        firstAddress.map { Unmanaged<ModeTimers>.fromOpaque($0).takeUnretainedValue() }
    }

    @inline(__always)
    private static func address(of timers: ModeTimers) -> UnsafeMutableRawPointer {
        Unmanaged.passUnretained(timers).toOpaque()
    }
    /// The first placement's positions (see `TimerPlacement`).
    var firstFire: Int32 = -1
    var firstHard: Int32 = -1
    private(set) var others: [TimerPlacement] = []

    var isEmpty: Bool { firstAddress == nil }

    /// Whether `timers`' mode holds the timer's only placement.
    @inline(__always)
    func isOnly(_ timers: ModeTimers) -> Bool { isFirst(timers) && others.isEmpty }

    /// Whether `timers`' mode holds the first placement.
    @inline(__always)
    func isFirst(_ timers: ModeTimers) -> Bool { firstAddress == Self.address(of: timers) }

    /// The placement in `timers`' mode, if the timer is a member.
    @inline(__always)
    func placement(in timers: ModeTimers) -> TimerPlacement? {
        if isFirst(timers) {
            var placement = TimerPlacement(timers)
            placement.fireIndex = Int(firstFire)
            placement.hardIndex = Int(firstHard)
            return placement
        }
        return others.first { $0.timers === timers }
    }

    /// Records a move inside one of `timers`' heaps.
    @inline(__always)
    mutating func setIndex(_ index: Int, in timers: ModeTimers, hard: Bool) {
        if isFirst(timers) {
            if hard { firstHard = Int32(index) } else { firstFire = Int32(index) }
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
        if firstAddress == nil {
            firstAddress = Self.address(of: timers)
            firstFire = -1
            firstHard = -1
        } else {
            others.append(TimerPlacement(timers))
        }
        return true
    }

    /// Drops the membership in `timers`' mode (the heaps must already be
    /// left). If that was the first placement and another takes its place,
    /// returns the new first one's mode: its heap entries must be marked as
    /// the first placement's (`ModeTimers.markFirstPlacement`).
    @discardableResult
    mutating func remove(_ timers: ModeTimers) -> ModeTimers? {
        guard isFirst(timers) else {
            others.removeAll { $0.timers === timers }
            return nil
        }
        guard !others.isEmpty else {
            firstAddress = nil
            return nil
        }
        let next = others.removeFirst()
        firstAddress = Self.address(of: next.timers)
        firstFire = Int32(next.fireIndex)
        firstHard = Int32(next.hardIndex)
        return next.timers
    }

    /// Drops every membership without touching the heaps: teardown only.
    mutating func removeAll() {
        firstAddress = nil
        others = []
    }

    /// Every mode the timer is a member of.
    var all: [ModeTimers] {
        guard let firstTimers else { return [] }
        return [firstTimers] + others.map(\.timers)
    }

    /// Calls `body` with each mode the timer is a member of; the body may
    /// change these placements (move, park or remove the timer): it sees the
    /// modes as they were when it began. A timer in one mode (almost all)
    /// needs no copy of the placements, so no retain and release of the
    /// `others` array.
    @inline(__always)
    func forEachMode(_ body: (ModeTimers) -> Void) {
        guard let firstAddress else { return }
        if others.isEmpty {
            // Borrowed, not retained: the loop's lock keeps the mode alive.
            Unmanaged<ModeTimers>.fromOpaque(firstAddress)._withUnsafeGuaranteedRef(body)
        } else {
            let modes = all
            for timers in modes { body(timers) }
        }
    }
}
