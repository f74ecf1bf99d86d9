// Harbor — a binary min-heap that knows where each key sits.
//
// HeapModule's Heap cannot remove or re-prioritise an arbitrary element, and a
// run loop does both all the time (invalidate, setFireDate). So: a plain array
// heap plus a key → position map, kept in step on every swap.

/// A min-heap of keys ordered by `(priority, sequence)`, with O(log n) insert,
/// update and remove of any key and O(1) access to the minimum.
///
/// Ties break by insertion order (the sequence number), so timers with the
/// same fire date fire in the order they were scheduled.
struct IndexedHeap<Key: Hashable> {
    struct Entry {
        var priority: Int64
        var sequence: UInt64
        var key: Key
        func precedes(_ other: Entry) -> Bool {
            priority != other.priority ? priority < other.priority : sequence < other.sequence
        }
    }

    private(set) var entries: [Entry] = []
    private var positions: [Key: Int] = [:]
    private var nextSequence: UInt64 = 0

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    /// The entry with the smallest priority. O(1).
    var min: Entry? { entries.first }

    func contains(_ key: Key) -> Bool { positions[key] != nil }
    func priority(of key: Key) -> Int64? { positions[key].map { entries[$0].priority } }

    /// Inserts `key`, or moves it to `priority` if present (keeping its
    /// sequence number). O(log n).
    mutating func set(_ key: Key, priority: Int64) {
        if let index = positions[key] {
            let old = entries[index].priority
            entries[index].priority = priority
            if priority < old { siftUp(index) } else { siftDown(index) }
            return
        }
        entries.append(Entry(priority: priority, sequence: nextSequence, key: key))
        nextSequence &+= 1
        positions[key] = entries.count - 1
        siftUp(entries.count - 1)
    }

    /// Removes `key`; returns whether it was there. O(log n).
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        guard let index = positions.removeValue(forKey: key) else { return false }
        let last = entries.count - 1
        if index != last {
            entries.swapAt(index, last)
            positions[entries[index].key] = index
        }
        entries.removeLast()
        if index < entries.count {
            siftUp(index)
            siftDown(index)
        }
        return true
    }

    /// Every entry whose priority is at most `limit`, in heap order (not
    /// sorted). O(k) for k results: they form a subtree at the root.
    func entries(upTo limit: Int64) -> [Entry] {
        var result: [Entry] = []
        var stack = entries.isEmpty ? [] : [0]
        while let index = stack.popLast() {
            guard entries[index].priority <= limit else { continue }
            result.append(entries[index])
            let left = 2 * index + 1
            if left < entries.count { stack.append(left) }
            if left + 1 < entries.count { stack.append(left + 1) }
        }
        return result
    }

    private mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard entries[index].precedes(entries[parent]) else { break }
            swapEntries(index, parent)
            index = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var index = start
        while true {
            let left = 2 * index + 1
            guard left < entries.count else { return }
            var smallest = left
            if left + 1 < entries.count && entries[left + 1].precedes(entries[left]) { smallest = left + 1 }
            guard entries[smallest].precedes(entries[index]) else { return }
            swapEntries(index, smallest)
            index = smallest
        }
    }

    private mutating func swapEntries(_ a: Int, _ b: Int) {
        entries.swapAt(a, b)
        positions[entries[a].key] = a
        positions[entries[b].key] = b
    }
}
