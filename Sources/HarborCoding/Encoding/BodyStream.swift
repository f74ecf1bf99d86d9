// Harbor — a body written as its value encodes, while its containers finish in order.
import HarborPorts

/// The body written straight into its bytes as the value encodes, with no
/// tree of its containers (``EncodedNode``): possible while the value
/// writes each container before going on in its parent, as synthesized
/// and almost all hand-written `encode(to:)`s do. A container's tag is
/// written when it opens, one byte held for its count, the count written
/// when it finishes (a count of 128 or more moves what follows to make
/// room); a write to a container finishes those opened inside it.
///
/// Anything the stream cannot write in place *fails* it: a write to a
/// container that has finished, a key written twice (the tree keeps the
/// last value at the first place), a second value or container where one
/// was written, `superEncoder()`, a container nested deeper than the
/// format allows, an error thrown by a value. The value is then encoded
/// again as a tree (``BodyEncoder``), which gives the bytes or the error;
/// so the bytes never depend on which way they were written.
struct BodyStream {
    var writer: BodyWriter
    /// The innermost open container, and those it is in (outermost
    /// first): one container open needs no array.
    private var innermost: OpenContainer?
    private var outer: [OpenContainer] = []
    /// The keys of open keyed containers past their first few: where each
    /// one's UTF-8 is (``OpenContainer/firstKeys``).
    private var keys: [UInt64] = []
    /// The keys of each open keyed container that holds more than a few
    /// (``OpenContainer/seen``).
    private var keySets: [Set<[UInt8]>] = []
    private var nextID = 0
    /// How many containers the stream's values are in already (1 for a
    /// ``MessageValueWriter``'s values, which are in its array).
    private let outerDepth: Int
    /// Whether the value did something the stream cannot write.
    private(set) var failed = false

    /// Above this many keys a container's keys are also kept in a set.
    private static var linearLimit: Int { 16 }

    init(writer: BodyWriter, outerDepth: Int) {
        self.writer = writer
        self.outerDepth = outerDepth
    }

    /// How many containers are open.
    var height: Int { innermost == nil ? 0 : outer.count + 1 }

    mutating func fail() { failed = true }

    /// Whether a value may be written at the place that was the end of
    /// the body (`offset`, with `height` containers open) when its encoder
    /// was made: nothing was written since. Fails the stream if not.
    @inline(__always)
    mutating func claim(offset: Int, height: Int) -> Bool {
        guard !failed, writer.bytes.count == offset, self.height == height else {
            failed = true
            return false
        }
        return true
    }

    /// Opens a container: its tag and a byte held for its count. Its id,
    /// or nil (the stream failed) when it is nested too deep.
    mutating func open(keyed: Bool) -> Int? {
        guard outerDepth + height < MessageCodingFormat.maximumDepth else {
            failed = true
            return nil
        }
        writer.tag(keyed ? .keyed : .array)
        let id = nextID
        nextID += 1
        if let innermost { outer.append(innermost) }
        innermost = OpenContainer(id: id, countAt: writer.bytes.count, keyed: keyed)
        writer.bytes.append(0)
        return id
    }

    /// Writes an array of strings whole (as its unkeyed container would);
    /// false (the stream failed) when it is nested too deep.
    mutating func strings(_ strings: [String]) -> Bool {
        guard outerDepth + height < MessageCodingFormat.maximumDepth else {
            failed = true
            return false
        }
        writer.tag(.array)
        writer.varint(UInt64(strings.count))
        for string in strings { writer.string(string) }
        return true
    }

    /// Makes container `id` the innermost open one, finishing those opened
    /// inside it; false (the stream failed) if it has finished.
    @inline(__always)
    mutating func enter(_ id: Int) -> Bool {
        if !failed, innermost?.id == id { return true }
        return enterOuter(id)
    }

    private mutating func enterOuter(_ id: Int) -> Bool {
        guard !failed, innermost != nil, let position = outer.lastIndex(where: { $0.id == id }) else {
            failed = true
            return false
        }
        while outer.count > position { finishInnermost() }
        return true
    }

    /// Counts one more value in array `id`, whose bytes follow; false
    /// (the stream failed) if the array has finished.
    @inline(__always)
    mutating func element(in id: Int) -> Bool {
        guard enter(id) else { return false }
        innermost!.count += 1
        return true
    }

    /// Writes `key` in keyed container `id`, its value to follow; false
    /// (the stream failed) if the container has finished or holds the key.
    mutating func key(_ key: String, in id: Int) -> Bool {
        guard enter(id) else { return false }
        var key = key
        let range: Range<Int> = key.withUTF8 { utf8 in
            writer.varint(UInt64(utf8.count))
            let start = writer.bytes.count
            writer.bytes.append(contentsOf: utf8)
            return start..<writer.bytes.count
        }
        guard range.upperBound <= Int(UInt32.max) else { return refuse() }
        let packed = UInt64(range.lowerBound) << 32 | UInt64(range.count)
        let count = innermost!.count
        let seen = innermost!.seen
        if seen >= 0 {
            guard keySets[seen].insert(Array(writer.bytes[range])).inserted else { return refuse() }
        } else {
            if isWritten(range, count: count) { return refuse() }
            if count == Self.linearLimit {
                innermost!.seen = keySets.count
                keySets.append(Set(keys[innermost!.keysFrom...].map { Array(writer.bytes[Self.range($0)]) }))
                keySets[keySets.count - 1].insert(Array(writer.bytes[range]))
            }
        }
        if count < OpenContainer.inlineKeys {
            innermost!.setFirstKey(count, packed)
        } else {
            if count == OpenContainer.inlineKeys {
                // Past its first keys: they all move to the array.
                innermost!.keysFrom = keys.count
                if keys.isEmpty { keys.reserveCapacity(32) }
                for index in 0..<count { keys.append(innermost!.firstKey(index)) }
            }
            keys.append(packed)
        }
        innermost!.count += 1
        return true
    }

    /// Whether the innermost container's first `count` keys hold the key at `range`.
    private func isWritten(_ range: Range<Int>, count: Int) -> Bool {
        let length = UInt64(range.count)
        return writer.bytes.withUnsafeBufferPointer { bytes in
            let key = UnsafeBufferPointer(rebasing: bytes[range])
            for index in 0..<count {
                let earlier = count <= OpenContainer.inlineKeys ? innermost!.firstKey(index)
                    : keys[innermost!.keysFrom + index]
                if earlier & 0xFFFF_FFFF == length,
                   UnsafeBufferPointer(rebasing: bytes[Self.range(earlier)]).elementsEqual(key)
                {
                    return true
                }
            }
            return false
        }
    }

    private static func range(_ packed: UInt64) -> Range<Int> {
        let start = Int(packed >> 32)
        return start..<(start + Int(packed & 0xFFFF_FFFF))
    }

    /// How many values open container `id` holds (0 once it finished).
    func count(of id: Int) -> Int {
        if innermost?.id == id { return innermost!.count }
        return outer.last { $0.id == id }?.count ?? 0
    }

    /// Finishes every open container: the bytes are the value's.
    mutating func finish() {
        while innermost != nil { finishInnermost() }
    }

    /// Forgets everything written from `offset` on, and that the stream
    /// failed: another value (a ``MessageValueWriter``'s) starts there.
    mutating func reset(to offset: Int) {
        writer.bytes.removeSubrange(offset...)
        innermost = nil
        outer.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        keySets.removeAll()
        failed = false
    }

    private mutating func finishInnermost() {
        guard let container = innermost else { return }
        innermost = outer.popLast()
        if container.keysFrom >= 0 { keys.removeSubrange(container.keysFrom...) }
        if container.seen >= 0 { keySets.removeSubrange(container.seen...) }
        writer.patchCount(container.count, at: container.countAt)
    }

    /// A key the stream cannot write: written twice (the tree writes it
    /// once, with the last value), or past what a key's place can say.
    private mutating func refuse() -> Bool {
        failed = true
        return false
    }
}
