// Harbor — writes an encoded value as the body's bytes (Docs/Coding.md).
import HarborPorts

/// Writes the format's bytes: a value's tree (``write(_:depth:)``), or
/// one value at a time as a ``BodyStream`` hands them over, refusing a tree
/// nested deeper or a body larger than the format allows.
struct BodyWriter {
    var bytes: [UInt8] = []

    /// A writer of a body: the version byte, room reserved for `capacity` bytes.
    init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
        bytes.append(MessageCodingFormat.version)
    }

    /// A writer of values without the version byte (a ``MessageValueWriter``'s values).
    init(values capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func write(_ node: EncodedNode, depth: Int = 0) throws(MessageCodingError) {
        switch node {
        case .null: tag(.null)
        case .bool(let value): bool(value)
        case .signed(let value): signed(value)
        case .unsigned(let value): unsigned(value)
        case .float(let value): float(value)
        case .double(let value): double(value)
        case .string(let value): string(value)
        case .bytes(let value): byteString(value)
        case .array(let array):
            try enter(depth)
            tag(.array)
            varint(UInt64(array.items.count))
            for item in array.items { try write(item, depth: depth + 1) }
        case .keyed(let keyed):
            try enter(depth)
            tag(.keyed)
            varint(UInt64(keyed.entries.count))
            for (key, value) in keyed.entries {
                utf8(key)
                try write(value, depth: depth + 1)
            }
        case .right(let kind, let index): carried(kind, index: index)
        case .region(let index): carried(.region, index: index)
        case .file(let index): carried(.file, index: index)
        case .deferred(let encoder):
            try write(encoder.result, depth: depth)
        }
        try checkSize()
    }

    private mutating func enter(_ depth: Int) throws(MessageCodingError) {
        guard depth < MessageCodingFormat.maximumDepth else {
            throw MessageCodingError(.limitExceeded,
                                     "containers nested more than \(MessageCodingFormat.maximumDepth) deep")
        }
    }

    /// Throws if the body is larger than the format allows.
    func checkSize() throws(MessageCodingError) {
        guard bytes.count <= MessageCodingFormat.maximumBodySize else {
            throw MessageCodingError(.limitExceeded,
                                     "the body is over the \(MessageCodingFormat.maximumBodySize)-byte limit")
        }
    }

    // MARK: One value at a time

    @inline(__always)
    mutating func tag(_ tag: MessageCodingFormat.Tag) { bytes.append(tag.rawValue) }

    @inline(__always)
    mutating func bool(_ value: Bool) { tag(value ? .true : .false) }

    @inline(__always)
    mutating func signed(_ value: Int64) {
        tag(.signed)
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    @inline(__always)
    mutating func unsigned(_ value: UInt64) {
        tag(.unsigned)
        varint(value)
    }

    mutating func float(_ value: Float) {
        tag(.float)
        littleEndian(UInt64(value.bitPattern), count: 4)
    }

    mutating func double(_ value: Double) {
        tag(.double)
        littleEndian(value.bitPattern, count: 8)
    }

    mutating func string(_ value: String) {
        tag(.string)
        utf8(value)
    }

    mutating func byteString(_ value: [UInt8]) {
        tag(.bytes)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// A carried right's, region's or file's tag and index.
    mutating func carried(_ kind: MessageCodingFormat.Tag, index: Int) {
        tag(kind)
        varint(UInt64(index))
    }

    /// Writes `value` if the format has a tag for its type, without an
    /// encoder of its own (an array's elements arrive generically; a byte
    /// array is a byte string); false for any other type.
    @inline(__always)
    mutating func primitive<T: Encodable>(_ value: T) -> Bool {
        if T.self == String.self {
            string(unsafeBitCast(value, to: String.self))
        } else if T.self == Int.self {
            signed(Int64(unsafeBitCast(value, to: Int.self)))
        } else if T.self == [UInt8].self {
            byteString(unsafeBitCast(value, to: [UInt8].self))
        } else if T.self == Bool.self {
            bool(unsafeBitCast(value, to: Bool.self))
        } else if T.self == Double.self {
            double(unsafeBitCast(value, to: Double.self))
        } else if T.self == Int64.self {
            signed(unsafeBitCast(value, to: Int64.self))
        } else if T.self == UInt64.self {
            unsigned(unsafeBitCast(value, to: UInt64.self))
        } else {
            return false
        }
        return true
    }

    /// A string's UTF-8 length and bytes: a string's payload, or a key.
    mutating func utf8(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// Writes `count` as the varint at `offset`, where one byte was held
    /// for it: a count of 128 or more moves what follows to make room.
    mutating func patchCount(_ count: Int, at offset: Int) {
        if count < 0x80 {
            bytes[offset] = UInt8(count)
            return
        }
        var encoded: [UInt8] = []
        var value = UInt64(count)
        while value >= 0x80 {
            encoded.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        encoded.append(UInt8(value))
        bytes.replaceSubrange(offset..<(offset + 1), with: encoded)
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private mutating func littleEndian(_ value: UInt64, count: Int) {
        for shift in stride(from: 0, to: count * 8, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
