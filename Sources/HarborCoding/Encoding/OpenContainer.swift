// Harbor — a container a BodyStream has begun and not yet finished.
import HarborPorts

/// A container whose tag a ``BodyStream`` has written and whose values are
/// still being written after it; its count is written when it finishes.
struct OpenContainer {
    /// Names it for the containers handed out (``KeyedStreamEncodingContainer``),
    /// which write to it only while it is open.
    let id: Int
    /// Where the byte held for its count is.
    let countAt: Int
    let keyed: Bool
    /// How many values (pairs) it holds so far.
    var count = 0
    /// Its first keys, each where its UTF-8 is in the body (start << 32 |
    /// length), held here so that a small container allocates nothing.
    var firstKeys: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Where its keys start in the stream's array of keys once it holds
    /// more than ``inlineKeys``; -1 before.
    var keysFrom = -1
    /// Where its keys' set is in the stream's sets, once it holds more
    /// than a few keys (a linear search costs more then); -1 before.
    var seen = -1

    /// How many keys ``firstKeys`` holds.
    static var inlineKeys: Int { 8 }

    init(id: Int, countAt: Int, keyed: Bool) {
        self.id = id
        self.countAt = countAt
        self.keyed = keyed
    }

    /// Key `index` (below ``inlineKeys``) of ``firstKeys``.
    func firstKey(_ index: Int) -> UInt64 {
        withUnsafeBytes(of: firstKeys) { $0.load(fromByteOffset: index * 8, as: UInt64.self) }
    }

    mutating func setFirstKey(_ index: Int, _ key: UInt64) {
        withUnsafeMutableBytes(of: &firstKeys) { $0.storeBytes(of: key, toByteOffset: index * 8, as: UInt64.self) }
    }
}
