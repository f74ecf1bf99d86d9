// Harbor — one mode's timers: a fire date heap, and a hard deadline heap for tolerant timers.
import HarborPorts
import HarborSystem

/// A mode's timers.
///
/// - **strict**: timers without tolerance, by fire date. For them the hard
///   deadline is the fire date, so one heap answers both questions.
/// - **lenient**: timers with a tolerance, in two heaps: by fire date (which
///   are due) and by fire date + tolerance (when the timerfd must go off).
///
/// The earliest hard deadline is the smaller of the strict heap's minimum and
/// the hard heap's minimum: O(1) (amortised: tombstones above it are dropped
/// first). Adding or rescheduling is O(log n) in one heap (two for a
/// tolerant timer); removing is O(1) amortised, leaving tombstones. Each
/// timer's position in each heap is kept in the timer itself
/// (`LoopTimer.placements`), so no operation hashes. The common case — no
/// tolerance — pays for one heap.
///
/// Each live heap entry holds one retain on its timer, taken on insert and
/// given back on removal (or in `deinit`); sifting moves unretained
/// references, and a tombstone holds none.
///
/// Guarded by the owning loop's lock.
final class ModeTimers: @unchecked Sendable {
    // @unchecked: every member is used only under the owning loop's `state`
    // lock (or by the loop's teardown, after it is marked terminated).

    let mode: LoopMode
    // @exclusivity(unchecked): the loop's lock already keeps accesses apart,
    // and the runtime check cost two calls around every heap operation.
    @exclusivity(unchecked) private var strict = TimerHeap(isHardHeap: false)
    @exclusivity(unchecked) private var lenientByFire = TimerHeap(isHardHeap: false)
    @exclusivity(unchecked) private var lenientByHard = TimerHeap(isHardHeap: true)
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0

    init(mode: LoopMode) { self.mode = mode }

    deinit {
        for entry in strict.entries where !entry.isTombstone { entry.timer.release() }
        for entry in lenientByFire.entries where !entry.isTombstone { entry.timer.release() }
    }

    /// Tombstones left in the heaps by removed timers (see `TimerHeap.bury`),
    /// for tests.
    var tombstones: Int { strict.tombstones + lenientByFire.tombstones + lenientByHard.tombstones }

    /// How many times the heaps dropped all their tombstones at once, for tests.
    var compactions: Int { strict.compactions + lenientByFire.compactions + lenientByHard.compactions }

    /// Scheduled timers (fired one-shot timers waiting in their callout are
    /// members but not counted).
    var count: Int { strict.count + lenientByFire.count }
    var isEmpty: Bool { strict.isEmpty && lenientByFire.isEmpty }

    /// When the mode's timerfd should fire: the earliest hard deadline. O(1).
    var earliestHardDeadline: Int64? {
        switch (strict.min(owner: self)?.key, lenientByHard.min(owner: self)?.key) {
        case let (a?, b?): Swift.min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): nil
        }
    }

    /// When the mode's timerfd should go off: the latest fire date not
    /// after the earliest hard deadline (RL07). No timer fires early (the
    /// date is at or after every timer due then) nor later than its
    /// tolerance allows (it is not after any hard deadline), and a timer
    /// waits past its fire date only to share the wake-up of a timer due
    /// after it: a lone timer fires at its fire date, as CF's does (CF arms
    /// the earliest fire date and gives the kernel the tolerance as leeway,
    /// which a timerfd cannot take). O(1) without tolerant timers; otherwise
    /// O(k) for the k timers due by the hard deadline, up to
    /// ``coalescingWalk`` (past that many, the latest fire date among the
    /// timers walked: still some timer's, so that one is on time).
    var wakeDeadline: Int64? {
        guard let hard = earliestHardDeadline else { return nil }
        // A strict timer's hard deadline is its fire date: one due by the
        // earliest hard deadline is due exactly then.
        if lenientByFire.isEmpty { return hard }
        if let first = strict.min(owner: self), first.key <= hard { return hard }
        return lenientByFire.latestKey(notAfter: hard, walkingAtMost: Self.coalescingWalk) ?? hard
    }

    /// How many heap entries ``wakeDeadline`` walks at most.
    static let coalescingWalk = 64

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
    func firstDue(at now: Int64, scheduledBefore mark: UInt64) -> Unmanaged<LoopTimer>? {
        guard let entry = nextEntry, entry.key <= now, entry.sequence < mark else { return nil }
        return entry.timer
    }

    /// Starts loading the object of the timer now first due, which the
    /// next `firstDue` will hand out: a pass firing many timers then waits
    /// for one timer's cache miss while it works on the one before.
    @inline(__always)
    func prefetchFirstDue() {
        guard let entry = strict.entries.first, !entry.isTombstone else { return }
        prefetchForWriting(entry.timer.toOpaque())
    }

    private var nextEntry: TimerHeap.Entry? {
        switch (strict.min(owner: self), lenientByFire.min(owner: self)) {
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
        let first = timer.placements.isFirst(self)
        if lenient {
            lenientByFire.insert(.init(key: fire, sequence: sequence, timer: reference, isFirstPlacement: first), owner: self)
            lenientByHard.insert(.init(key: fire &+ tolerance, sequence: sequence, timer: reference, isFirstPlacement: first),
                                 owner: self)
        } else {
            strict.insert(.init(key: fire, sequence: sequence, timer: reference, isFirstPlacement: first), owner: self)
        }
    }

    /// Takes a member out of the heaps but keeps its membership: a one-shot
    /// timer about to be called out. O(log n).
    func park(_ timer: LoopTimer) {
        parkKeepingReference(timer)?.release()
    }

    /// `park`, handing the heap's retain to the caller instead of giving it
    /// back: the reference to release later, or nil if it was not scheduled
    /// here (nothing to release).
    func parkKeepingReference(_ timer: LoopTimer) -> Unmanaged<LoopTimer>? {
        guard let placement = timer.placements.placement(in: self), placement.isScheduled else { return nil }
        return unschedule(timer, placement)
    }

    /// Ends the membership; returns false if it was not a member. O(1)
    /// amortised: the heap entries become tombstones (see `TimerHeap.bury`).
    @discardableResult
    func remove(_ timer: LoopTimer) -> Bool {
        guard let placement = timer.placements.placement(in: self) else { return false }
        if placement.isScheduled { unschedule(timer, placement, leavingTombstones: true).release() }
        timer.placements.remove(self)?.markFirstPlacement(of: timer)
        return true
    }

    /// The timer's first placement is now this mode's: its heap entries say
    /// so, so that sifting writes their positions there.
    func markFirstPlacement(of timer: LoopTimer) {
        guard let placement = timer.placements.placement(in: self), placement.isScheduled else { return }
        if placement.hardIndex >= 0 {
            lenientByFire.markFirstPlacement(at: placement.fireIndex)
            lenientByHard.markFirstPlacement(at: placement.hardIndex)
        } else {
            strict.markFirstPlacement(at: placement.fireIndex)
        }
    }

    /// Removes the timer's entries from the heaps (or, with
    /// `leavingTombstones`, marks them dead where they lie) and marks it
    /// unscheduled; returns the reference whose retain the caller must give back.
    private func unschedule(_ timer: LoopTimer, _ placement: TimerPlacement,
                            leavingTombstones: Bool = false) -> Unmanaged<LoopTimer> {
        if placement.hardIndex >= 0 {
            // Changing the fire heap never touches hardIndex: it is still valid.
            if leavingTombstones {
                lenientByFire.bury(at: placement.fireIndex, owner: self)
                lenientByHard.bury(at: placement.hardIndex, owner: self)
            } else {
                lenientByFire.remove(at: placement.fireIndex, owner: self)
                lenientByHard.remove(at: placement.hardIndex, owner: self)
            }
        } else if leavingTombstones {
            strict.bury(at: placement.fireIndex, owner: self)
        } else {
            strict.remove(at: placement.fireIndex, owner: self)
        }
        timer.placements.setIndex(-1, in: self, hard: false)
        timer.placements.setIndex(-1, in: self, hard: true)
        // The heap's entry held this retain (on the fire date heap only).
        return Unmanaged.passUnretained(timer)
    }

    /// The fire date the heap holds for `timer`, if scheduled here.
    func fireDate(of timer: LoopTimer) -> Int64? {
        guard let placement = timer.placements.placement(in: self), placement.isScheduled else { return nil }
        return placement.hardIndex >= 0 ? lenientByFire.key(at: placement.fireIndex) : strict.key(at: placement.fireIndex)
    }
}
