// Harbor — writes an encoded value as the body's bytes (Docs/Coding.md).
import HarborPorts

/// Writes the version byte and a value's tree in the format's bytes,
/// refusing a tree nested deeper or a body larger than the format allows.
struct BodyWriter {
    private(set) var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(64)
        bytes.append(MessageCodingFormat.version)
    }

    mutating func write(_ node: EncodedNode, depth: Int = 0) throws(MessageCodingError) {
        switch node {
        case .null: tag(.null)
        case .bool(let value): tag(value ? .true : .false)
        case .signed(let value):
            tag(.signed)
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        case .unsigned(let value):
            tag(.unsigned)
            varint(value)
        case .float(let value):
            tag(.float)
            littleEndian(UInt64(value.bitPattern), count: 4)
        case .double(let value):
            tag(.double)
            littleEndian(value.bitPattern, count: 8)
        case .string(var value):
            tag(.string)
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        case .bytes(let value):
            tag(.bytes)
            varint(UInt64(value.count))
            bytes.append(contentsOf: value)
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
                var key = key
                key.withUTF8 { utf8 in
                    varint(UInt64(utf8.count))
                    bytes.append(contentsOf: utf8)
                }
                try write(value, depth: depth + 1)
            }
        case .right(let kind, let index):
            tag(kind)
            varint(UInt64(index))
        case .region(let index):
            tag(.region)
            varint(UInt64(index))
        case .file(let index):
            tag(.file)
            varint(UInt64(index))
        case .deferred(let encoder):
            try write(encoder.result, depth: depth)
        }
        guard bytes.count <= MessageCodingFormat.maximumBodySize else {
            throw MessageCodingError(.limitExceeded,
                                     "the body is over the \(MessageCodingFormat.maximumBodySize)-byte limit")
        }
    }

    private mutating func enter(_ depth: Int) throws(MessageCodingError) {
        guard depth < MessageCodingFormat.maximumDepth else {
            throw MessageCodingError(.limitExceeded,
                                     "containers nested more than \(MessageCodingFormat.maximumDepth) deep")
        }
    }

    private mutating func tag(_ tag: MessageCodingFormat.Tag) { bytes.append(tag.rawValue) }

    private mutating func varint(_ value: UInt64) {
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
