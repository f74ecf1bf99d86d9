// Harbor — one mode's timers, ordered two ways.

/// A mode's timers in two index-tracked heaps: by fire date (which timers
/// are due) and by hard deadline, fire date + tolerance (when the mode's
/// timerfd must go off at the latest). Every operation is O(log n); the
/// next deadline is O(1).
///
/// Guarded by the owning loop's lock; a pure value, tested without a kernel.
struct ModeTimers {
    private var byFire = IndexedHeap<ObjectIdentifier>()
    private var byHard = IndexedHeap<ObjectIdentifier>()
    private(set) var timers: [ObjectIdentifier: LoopTimer] = [:]

    var isEmpty: Bool { timers.isEmpty }
    var count: Int { timers.count }

    /// Adds `timer` or moves it to new dates.
    mutating func schedule(_ timer: LoopTimer, fire: Int64, tolerance: Int64) {
        let id = ObjectIdentifier(timer)
        timers[id] = timer
        byFire.set(id, priority: fire)
        byHard.set(id, priority: fire &+ max(0, tolerance))
    }

    mutating func remove(_ timer: LoopTimer) {
        let id = ObjectIdentifier(timer)
        guard timers.removeValue(forKey: id) != nil else { return }
        byFire.remove(id)
        byHard.remove(id)
    }

    func contains(_ timer: LoopTimer) -> Bool { timers[ObjectIdentifier(timer)] != nil }

    /// When the mode's timerfd should fire: the earliest hard deadline.
    var earliestHardDeadline: Int64? { byHard.min?.priority }
    /// The earliest fire date.
    var earliestFireDate: Int64? { byFire.min?.priority }

    /// The timers due at `now` (fire date ≤ now), earliest first.
    func due(at now: Int64) -> [LoopTimer] {
        byFire.entries(upTo: now)
            .sorted { $0.precedes($1) }
            .compactMap { timers[$0.key] }
    }

    /// The fire date the heap holds for `timer`.
    func fireDate(of timer: LoopTimer) -> Int64? { byFire.priority(of: ObjectIdentifier(timer)) }
}
