// Harbor — a binary min-heap of timers that writes each timer's position into the timer.
//
// A run loop removes and re-prioritises arbitrary timers all the time
// (invalidate, setFireDate), so the heap must find a timer's entry without a
// search. The position lives in the timer's placement for this mode (one
// array write per move), not in a dictionary (two hashed writes per swap).
// Entries hold unretained references: the owning `ModeTimers` keeps one
// retain per entry, so moving entries around costs no retain/release.

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
        var sequence: UInt64
        var timer: Unmanaged<LoopTimer>

        @inline(__always)
        func precedes(_ other: Entry) -> Bool {
            key != other.key ? key < other.key : sequence < other.sequence
        }
    }

    /// Children per node.
    static let arity = 4

    /// Which position of a timer's placement this heap maintains: the fire
    /// date heaps write `fireIndex`, the hard deadline heap `hardIndex`.
    let isHardHeap: Bool
    private(set) var entries: [Entry] = []

    init(isHardHeap: Bool) { self.isHardHeap = isHardHeap }

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// The entry with the smallest key. O(1).
    var min: Entry? { entries.first }

    func key(at index: Int) -> Int64 { entries[index].key }

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

    /// Every timer in the heap (unordered), for teardown and descriptions.
    var timers: [Unmanaged<LoopTimer>] { entries.map(\.timer) }

    // Sifting moves a "hole": each step writes one entry and one position,
    // and the moving entry is written once at the end.

    private static func siftUp(_ buffer: UnsafeMutableBufferPointer<Entry>, from start: Int, owner: ModeTimers, hard: Bool) {
        let moving = buffer[start]
        var index = start
        while index > 0 {
            let parent = (index - 1) / Self.arity
            guard moving.precedes(buffer[parent]) else { break }
            buffer[index] = buffer[parent]
            note(buffer[index].timer, at: index, owner: owner, hard: hard)
            index = parent
        }
        buffer[index] = moving
        note(moving.timer, at: index, owner: owner, hard: hard)
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
            note(buffer[index].timer, at: index, owner: owner, hard: hard)
            index = child
        }
        buffer[index] = moving
        note(moving.timer, at: index, owner: owner, hard: hard)
    }

    @inline(__always)
    private static func note(_ timer: Unmanaged<LoopTimer>, at index: Int, owner: ModeTimers, hard: Bool) {
        timer._withUnsafeGuaranteedRef { $0.placements.setIndex(index, in: owner, hard: hard) }
    }
}
