// Harbor — a 4-ary min-heap of timers that writes each timer's position into the timer.
//
// A run loop removes and re-prioritises arbitrary timers all the time
// (invalidate, setFireDate), so the heap must find a timer's entry without a
// search. The position lives in the timer's placement for this mode (one
// store per move, with no load first: see `note`), not in a dictionary (two
// hashed writes per swap). Entries hold unretained references: the owning
// `ModeTimers` keeps one retain per entry, so moving entries around costs no
// retain/release. A removed timer's entry may stay behind as a tombstone
// that names no timer (see `bury`): cancelling then writes one entry.

/// A 4-ary min-heap of timers ordered by `(key, sequence)`; O(log n)
/// insert, update and remove at a known position, O(1) minimum.
///
/// Four children per node halve the depth of a binary heap (9 levels for
/// 100k timers instead of 17), and every level moved writes a position into
/// a timer object, which at these sizes is a cache miss; the four children
/// compared at each level share a cache line or two of `entries`.
///
/// Ties break by `sequence` (the mode's insertion counter), so timers with the
/// same date fire in the order they were scheduled.
///
/// Guarded by the owning loop's lock, like the `ModeTimers` that holds it.
struct TimerHeap {
    struct Entry {
        var key: Int64
        /// The sequence number times two; the low bit says the entry is its
        /// timer's first placement's (see `note`). Sequence numbers are
        /// distinct within a heap, so the bit never decides an order.
        private var bits: UInt64
        /// Unretained. ``tombstone`` once the timer left the heap.
        var timer: Unmanaged<LoopTimer>

        init(key: Int64, sequence: UInt64, timer: Unmanaged<LoopTimer>, isFirstPlacement: Bool) {
            self.key = key
            self.bits = sequence << 1 | (isFirstPlacement ? 1 : 0)
            self.timer = timer
        }

        /// The mode's insertion counter when the entry was (re)scheduled.
        var sequence: UInt64 {
            get { bits >> 1 }
            set { bits = newValue << 1 | bits & 1 }
        }

        /// Whether the timer's first placement (`TimerPlacements.firstFire`,
        /// `firstHard`) holds this entry's position.
        var isFirstPlacement: Bool {
            get { bits & 1 != 0 }
            set { bits = bits & ~1 | (newValue ? 1 : 0) }
        }

        /// The entry of a timer removed from the heap but left in place.
        var isTombstone: Bool { timer.toOpaque() == Entry.tombstone }

        /// What a tombstone's `timer` holds: an address no object has
        /// (never dereferenced). Writing it needs no read of the entry, so a
        /// cancel does not wait for the entry's cache line.
        static var tombstone: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x10).unsafelyUnwrapped }

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            key != other.key ? key < other.key : bits < other.bits
        }
    }

    /// Children per node.
    static let arity = 4

    /// Which position of a timer's placement this heap maintains: the fire
    /// date heaps write `fireIndex`, the hard deadline heap `hardIndex`.
    let isHardHeap: Bool
    private(set) var entries: [Entry] = []
    /// Entries that are tombstones (see ``bury(at:owner:)``).
    private(set) var tombstones = 0
    /// How many times ``compact(owner:)`` ran, for tests.
    private(set) var compactions = 0

    init(isHardHeap: Bool) { self.isHardHeap = isHardHeap }

    /// Live entries (tombstones are not counted).
    var count: Int { entries.count - tombstones }
    var isEmpty: Bool { count == 0 }

    /// The live entry with the smallest key, after dropping the tombstones
    /// above it. O(1) when the top is live.
    mutating func min(owner: ModeTimers) -> Entry? {
        while let first = entries.first, first.isTombstone {
            tombstones -= 1
            remove(at: 0, owner: owner)
        }
        return entries.first
    }

    func key(at index: Int) -> Int64 { entries[index].key }

    /// The largest live key not after `bound`, or nil if no live entry is at
    /// or below it. Walks only the entries at or below `bound` (a heap keeps
    /// every subtree above its root's key); once it has walked `limit` of
    /// them it stops with the largest live key walked so far (nil if those
    /// were all tombstones). O(min(k, limit)) for k such entries; no allocation.
    func latestKey(notAfter bound: Int64, walkingAtMost limit: Int) -> Int64? {
        guard let top = entries.first, top.key <= bound else { return nil }
        // Each entry walked pushes at most `arity` children, and no entry is
        // pushed twice: a heap of few timers needs a stack of few slots
        // (small enough for the thread's stack, not the allocator).
        let capacity = Swift.min(limit * Self.arity + 1, entries.count)
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: capacity) { stack -> Int64? in
            var latest: Int64?
            var height = 1
            var walked = 0
            stack[0] = 0
            while height > 0 {
                if walked == limit { return latest }
                walked += 1
                height -= 1
                let index = Int(stack[height])
                let entry = entries[index]
                if !entry.isTombstone, latest.map({ entry.key > $0 }) ?? true { latest = entry.key }
                let first = Self.arity * index + 1
                var child = first
                while child < Swift.min(first + Self.arity, entries.count) {
                    if entries[child].key <= bound {
                        stack[height] = Int32(child)
                        height += 1
                    }
                    child += 1
                }
            }
            return latest
        }
    }

    /// Adds an entry. O(log n).
    mutating func insert(_ entry: Entry, owner: ModeTimers) {
        entries.append(entry)
        let last = entries.count - 1
        let hard = isHardHeap
        entries.withUnsafeMutableBufferPointer { buffer in
            Self.siftUp(buffer, from: last, owner: owner, hard: hard)
        }
    }

    /// Gives the entry at `index` a new key and sequence. O(log n).
    mutating func update(at index: Int, key: Int64, sequence: UInt64, owner: ModeTimers) {
        let hard = isHardHeap
        entries.withUnsafeMutableBufferPointer { buffer in
            let old = buffer[index]
            buffer[index].key = key
            buffer[index].sequence = sequence
            if buffer[index].precedes(old) {
                Self.siftUp(buffer, from: index, owner: owner, hard: hard)
            } else {
                Self.siftDown(buffer, from: index, owner: owner, hard: hard)
            }
        }
    }

    /// Removes and returns the entry at `index`. O(log n).
    @discardableResult
    mutating func remove(at index: Int, owner: ModeTimers) -> Entry {
        let last = entries.count - 1
        if index == last { return entries.removeLast() }
        let removed = entries[index]
        let moved = entries.removeLast()
        let hard = isHardHeap
        entries.withUnsafeMutableBufferPointer { buffer in
            buffer[index] = moved
            // The moved entry may belong above or below the hole.
            if index > 0 && moved.precedes(buffer[(index - 1) / Self.arity]) {
                Self.siftUp(buffer, from: index, owner: owner, hard: hard)
            } else {
                Self.siftDown(buffer, from: index, owner: owner, hard: hard)
            }
        }
        return removed
    }

    /// Takes the entry at `index` out of the heap by marking it a tombstone
    /// where it lies (the caller gives back the entry's retain on the timer,
    /// which the tombstone no longer names). O(1): no sift,
    /// so cancelling a timer writes one entry instead of moving a chain of
    /// them and the positions of their timers. Tombstones leave when they
    /// reach the top (``min(owner:)``), or all at once when they outnumber
    /// the live entries (O(n), so O(1) amortised per tombstone).
    mutating func bury(at index: Int, owner: ModeTimers) {
        if index == entries.count - 1 {
            entries.removeLast()
        } else {
            entries[index].timer = Unmanaged.fromOpaque(Entry.tombstone)
            tombstones += 1
        }
        if tombstones == entries.count {
            entries.removeAll(keepingCapacity: true)
            tombstones = 0
        } else if tombstones > Self.tombstoneSlack && tombstones > entries.count - tombstones {
            compact(owner: owner)
        }
    }

    /// Tombstones a heap keeps however few its live entries.
    static let tombstoneSlack = 64

    /// Drops every tombstone and rebuilds the heap from the live entries
    /// (Floyd's bottom-up construction), then writes each timer's position.
    private mutating func compact(owner: ModeTimers) {
        entries.removeAll { $0.isTombstone }
        tombstones = 0
        compactions += 1
        let hard = isHardHeap
        entries.withUnsafeMutableBufferPointer { buffer in
            guard buffer.count > 1 else { return }
            var index = (buffer.count - 2) / Self.arity
            while index >= 0 {
                Self.siftDown(buffer, from: index, owner: owner, hard: hard)
                index -= 1
            }
            for index in buffer.indices { Self.note(buffer[index], at: index, owner: owner, hard: hard) }
        }
    }

    /// Every live timer in the heap (unordered), for teardown and descriptions.
    var timers: [Unmanaged<LoopTimer>] { entries.compactMap { $0.isTombstone ? nil : $0.timer } }

    // Sifting moves a "hole": each step writes one entry and one position,
    // and the moving entry is written once at the end.

    private static func siftUp(_ buffer: UnsafeMutableBufferPointer<Entry>, from start: Int, owner: ModeTimers, hard: Bool) {
        let moving = buffer[start]
        var index = start
        while index > 0 {
            let parent = (index - 1) / Self.arity
            guard moving.precedes(buffer[parent]) else { break }
            buffer[index] = buffer[parent]
            note(buffer[index], at: index, owner: owner, hard: hard)
            index = parent
        }
        buffer[index] = moving
        note(moving, at: index, owner: owner, hard: hard)
    }

    private static func siftDown(_ buffer: UnsafeMutableBufferPointer<Entry>, from start: Int, owner: ModeTimers, hard: Bool) {
        let moving = buffer[start]
        let count = buffer.count
        var index = start
        while true {
            let first = Self.arity * index + 1
            guard first < count else { break }
            var child = first
            var next = first + 1
            let end = Swift.min(first + Self.arity, count)
            while next < end {
                if buffer[next].precedes(buffer[child]) { child = next }
                next += 1
            }
            guard buffer[child].precedes(moving) else { break }
            buffer[index] = buffer[child]
            note(buffer[index], at: index, owner: owner, hard: hard)
            index = child
        }
        buffer[index] = moving
        note(moving, at: index, owner: owner, hard: hard)
    }

    /// Writes a moved entry's position into its timer's placement: with one
    /// store for the first placement (no load of the cold timer first), by a
    /// search of the others otherwise. Tombstones have no timer to tell.
    @inline(__always)
    private static func note(_ entry: Entry, at index: Int, owner: ModeTimers, hard: Bool) {
        guard !entry.isTombstone else { return }
        entry.timer._withUnsafeGuaranteedRef { timer in
            if entry.isFirstPlacement {
                if hard { timer.placements.firstHard = Int32(index) } else { timer.placements.firstFire = Int32(index) }
            } else {
                timer.placements.setIndex(index, in: owner, hard: hard)
            }
        }
    }

    /// Marks the entry at `index` as its timer's first placement's (the
    /// timer left the mode that held its first placement).
    mutating func markFirstPlacement(at index: Int) {
        entries[index].isFirstPlacement = true
    }
}
