// Harbor — one mode's timers: a fire date heap, and a hard deadline heap for tolerant timers.

/// A mode's timers.
///
/// - **strict**: timers without tolerance, by fire date. For them the hard
///   deadline is the fire date, so one heap answers both questions.
/// - **lenient**: timers with a tolerance, in two heaps: by fire date (which
///   are due) and by fire date + tolerance (when the timerfd must go off).
///
/// The earliest hard deadline is the smaller of the strict heap's minimum and
/// the hard heap's minimum: O(1). Adding, removing or rescheduling is
/// O(log n) in one heap (two for a tolerant timer). Each timer's position in
/// each heap is kept in the timer itself (`LoopTimer.placements`), so no
/// operation hashes. The common case — no tolerance — pays for one heap.
///
/// Each heap entry holds one retain on its timer, taken on insert and given
/// back on removal (or in `deinit`); sifting moves unretained references.
///
/// Guarded by the owning loop's lock.
final class ModeTimers: @unchecked Sendable {
    // @unchecked: every member is used only under the owning loop's `state`
    // lock (or by the loop's teardown, after it is marked terminated).

    let mode: LoopMode
    private var strict = TimerHeap(isHardHeap: false)
    private var lenientByFire = TimerHeap(isHardHeap: false)
    private var lenientByHard = TimerHeap(isHardHeap: true)
    private var nextSequence: UInt64 = 0

    init(mode: LoopMode) { self.mode = mode }

    deinit {
        for entry in strict.entries { entry.timer.release() }
        for entry in lenientByFire.entries { entry.timer.release() }
    }

    /// Scheduled timers (fired one-shot timers waiting in their callout are
    /// members but not counted).
    var count: Int { strict.count + lenientByFire.count }
    var isEmpty: Bool { strict.isEmpty && lenientByFire.isEmpty }

    /// When the mode's timerfd should fire: the earliest hard deadline. O(1).
    var earliestHardDeadline: Int64? {
        switch (strict.min?.key, lenientByHard.min?.key) {
        case let (a?, b?): Swift.min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): nil
        }
    }

    /// The earliest fire date. O(1).
    var earliestFireDate: Int64? { nextEntry?.key }

    /// The timer with the earliest fire date. O(1).
    var earliest: LoopTimer? { nextEntry?.timer.takeUnretainedValue() }

    /// Every scheduled timer, unordered.
    var all: [LoopTimer] {
        (strict.timers + lenientByFire.timers).map { $0.takeUnretainedValue() }
    }

    /// The scheduled timer with the earliest `(fire date, sequence)`, if its
    /// fire date is at most `now`. O(1).
    func firstDue(at now: Int64) -> LoopTimer? {
        guard let entry = nextEntry, entry.key <= now else { return nil }
        return entry.timer.takeUnretainedValue()
    }

    /// The sequence the next (re)scheduled timer gets: timers scheduled or
    /// moved from now on compare as not before it.
    var sequenceMark: UInt64 { nextSequence }

    /// Like ``firstDue(at:)``, but nil if the earliest timer was scheduled
    /// or moved at or after `mark` (it then waits for the next pass, and so
    /// does everything behind it).
    func firstDue(at now: Int64, scheduledBefore mark: UInt64) -> LoopTimer? {
        guard let entry = nextEntry, entry.key <= now, entry.sequence < mark else { return nil }
        return entry.timer.takeUnretainedValue()
    }

    private var nextEntry: TimerHeap.Entry? {
        switch (strict.min, lenientByFire.min) {
        case let (a?, b?): a.precedes(b) ? a : b
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): nil
        }
    }

    // MARK: Membership and scheduling (timer's placements are written here)

    /// Makes `timer` a member and schedules it at `fire` (+ `tolerance`).
    /// Returns false if it was a member already (it is then rescheduled).
    @discardableResult
    func add(_ timer: LoopTimer, fire: Int64, tolerance: Int64) -> Bool {
        let isNew = timer.placements.add(self)
        schedule(timer, fire: fire, tolerance: tolerance)
        return isNew
    }

    /// Puts a member at new dates: moves it if scheduled, inserts it if it was
    /// waiting in its callout. Does nothing for a non-member. O(log n).
    func schedule(_ timer: LoopTimer, fire: Int64, tolerance: Int64) {
        guard let placement = timer.placements.placement(in: self) else { return }
        let lenient = tolerance > 0
        if placement.isScheduled {
            if lenient == (placement.hardIndex >= 0) {
                // Same heaps: move in place, with a new sequence number (it
                // now ranks after timers already there with the same date,
                // and a pass that began before the move leaves it alone).
                let sequence = nextSequence
                nextSequence &+= 1
                if lenient {
                    lenientByFire.update(at: placement.fireIndex, key: fire, sequence: sequence, owner: self)
                    // Sifting the fire heap never touches hardIndex.
                    lenientByHard.update(at: timer.placements.placement(in: self).unsafelyUnwrapped.hardIndex,
                                         key: fire &+ tolerance, sequence: sequence, owner: self)
                } else {
                    strict.update(at: placement.fireIndex, key: fire, sequence: sequence, owner: self)
                }
                return
            }
            // The tolerance moved it between strict and lenient.
            unschedule(timer, placement).release()
        }
        let sequence = nextSequence
        nextSequence &+= 1
        let reference = Unmanaged.passRetained(timer)
        if lenient {
            lenientByFire.insert(.init(key: fire, sequence: sequence, timer: reference), owner: self)
            lenientByHard.insert(.init(key: fire &+ tolerance, sequence: sequence, timer: reference), owner: self)
        } else {
            strict.insert(.init(key: fire, sequence: sequence, timer: reference), owner: self)
        }
    }

    /// Takes a member out of the heaps but keeps its membership: a one-shot
    /// timer about to be called out. O(log n).
    func park(_ timer: LoopTimer) {
        guard let placement = timer.placements.placement(in: self), placement.isScheduled else { return }
        unschedule(timer, placement).release()
    }

    /// Ends the membership; returns false if it was not a member. O(log n).
    @discardableResult
    func remove(_ timer: LoopTimer) -> Bool {
        guard let placement = timer.placements.placement(in: self) else { return false }
        if placement.isScheduled { unschedule(timer, placement).release() }
        timer.placements.remove(self)
        return true
    }

    /// Removes the timer's entries from the heaps and marks it unscheduled;
    /// returns the reference whose retain the caller must give back.
    private func unschedule(_ timer: LoopTimer, _ placement: TimerPlacement) -> Unmanaged<LoopTimer> {
        let entry: TimerHeap.Entry
        if placement.hardIndex >= 0 {
            entry = lenientByFire.remove(at: placement.fireIndex, owner: self)
            // Sifting the fire heap never touches hardIndex: it is still valid.
            lenientByHard.remove(at: placement.hardIndex, owner: self)
        } else {
            entry = strict.remove(at: placement.fireIndex, owner: self)
        }
        timer.placements.setIndex(-1, in: self, hard: false)
        timer.placements.setIndex(-1, in: self, hard: true)
        return entry.timer
    }

    /// The fire date the heap holds for `timer`, if scheduled here.
    func fireDate(of timer: LoopTimer) -> Int64? {
        guard let placement = timer.placements.placement(in: self), placement.isScheduled else { return nil }
        return placement.hardIndex >= 0 ? lenientByFire.key(at: placement.fireIndex) : strict.key(at: placement.fireIndex)
    }
}
