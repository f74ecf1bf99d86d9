// Harbor — reads a body from another process, checking everything first.
import HarborPorts

/// Parses a body into ``TapeNode``s, as hostile input, before any value is
/// made from it: every length is checked against what remains, a count
/// against the fewest bytes that many values take (so nothing is reserved
/// that the body does not pay for), containers are nested at most
/// ``MessageCodingFormat/maximumDepth`` deep, strings and keys must be
/// UTF-8, a keyed container must not hold a key twice, and each right or
/// region or file index must name a right of that kind, a region or a file
/// that the message carries, once in the whole body. Every failure is a
/// ``MessageCodingError``; nothing traps, and the tape holds at most one
/// node per byte of the body.
struct BodyReader {
    private let body: UnsafeRawBufferPointer
    private let rightKinds: [CarriedRightKind]
    private let regionCount: Int
    private let fileCount: Int
    private var offset = 0
    private var rightUsed: [Bool]
    private var regionUsed: [Bool]
    private var fileUsed: [Bool]
    private(set) var tape: [TapeNode] = []
    private(set) var strings: [String] = []

    /// Parses `body` for a message carrying rights of `rightKinds`, `regionCount` regions and `fileCount` files.
    static func parse(
        _ body: UnsafeRawBufferPointer, rights rightKinds: [CarriedRightKind], regionCount: Int, fileCount: Int = 0
    ) throws(MessageCodingError) -> BodyReader {
        guard body.count <= MessageCodingFormat.maximumBodySize else {
            throw MessageCodingError(.limitExceeded,
                                     "a body of \(body.count) bytes is over the \(MessageCodingFormat.maximumBodySize)-byte limit")
        }
        guard let version = body.first else { throw MessageCodingError(.malformedBody, "the body is empty") }
        guard version == MessageCodingFormat.version else {
            throw MessageCodingError(.unsupportedVersion,
                                     "version \(version); this decoder reads version \(MessageCodingFormat.version)")
        }
        var reader = BodyReader(body: body, rightKinds: rightKinds, regionCount: regionCount, fileCount: fileCount)
        // At most 16 nodes (640 bytes) ahead: an allocation malloc serves from its per-thread cache.
        reader.tape.reserveCapacity(min(body.count, 16))
        reader.offset = 1
        try reader.value(depth: 0, key: -1..<(-1))
        guard reader.offset == body.count else {
            throw MessageCodingError(.malformedBody, "\(body.count - reader.offset) bytes after the value")
        }
        return reader
    }

    private init(body: UnsafeRawBufferPointer, rightKinds: [CarriedRightKind], regionCount: Int, fileCount: Int) {
        self.body = body
        self.rightKinds = rightKinds
        self.regionCount = regionCount
        self.fileCount = fileCount
        fileUsed = Array(repeating: false, count: fileCount)
        rightUsed = Array(repeating: false, count: rightKinds.count)
        regionUsed = Array(repeating: false, count: regionCount)
    }

    private var remaining: Int { body.count - offset }

    private mutating func value(depth: Int, key: Range<Int>) throws(MessageCodingError) {
        let at = offset
        let byte = try self.byte()
        guard let tag = MessageCodingFormat.Tag(rawValue: byte) else {
            throw MessageCodingError(.malformedBody, "unknown tag \(byte) at offset \(at)")
        }
        let index = tape.count
        var count: Int32 = 0
        var start: Int32 = 0
        var payload: UInt64 = 0
        switch tag {
        case .null, .false, .true:
            break
        case .signed, .unsigned:
            payload = try varint()
        case .float:
            payload = try fixed(4)
        case .double:
            payload = try fixed(8)
        case .string:
            payload = UInt64(try string())
        case .bytes:
            let length = try length()
            start = Int32(offset)
            count = Int32(length)
            offset += length
        case .array, .keyed:
            guard depth < MessageCodingFormat.maximumDepth else {
                throw MessageCodingError(.limitExceeded,
                                         "containers nested more than \(MessageCodingFormat.maximumDepth) deep at offset \(at)")
            }
            // A value takes at least one byte, a key-value pair two.
            let elements = try varint()
            let least: UInt64 = tag == .array ? 1 : 2
            guard elements <= UInt64(remaining) / least else {
                throw MessageCodingError(.malformedBody,
                                         "a container of \(elements) values at offset \(at) is longer than the body")
            }
            count = Int32(elements)
        case .sendRight, .sendOnceRight, .receiveRight:
            payload = try rightIndex(tag, at: at)
        case .region:
            let region = try varint()
            guard region < UInt64(regionCount) else {
                throw MessageCodingError(.invalidRightIndex,
                                         "region \(region) at offset \(at); the message carries \(regionCount)")
            }
            guard !regionUsed[Int(region)] else {
                throw MessageCodingError(.invalidRightIndex, "region \(region) named twice (offset \(at))")
            }
            regionUsed[Int(region)] = true
            payload = region
        case .file:
            let file = try varint()
            guard file < UInt64(fileCount) else {
                throw MessageCodingError(.invalidRightIndex,
                                         "file \(file) at offset \(at); the message carries \(fileCount)")
            }
            guard !fileUsed[Int(file)] else {
                throw MessageCodingError(.invalidRightIndex, "file \(file) named twice (offset \(at))")
            }
            fileUsed[Int(file)] = true
            payload = file
        }
        tape.append(TapeNode(tag: tag, keyStart: Int32(key.lowerBound), keyLength: Int32(key.count), end: 0,
                             count: count, start: start, payload: payload))
        if tag == .array {
            for _ in 0..<count { try value(depth: depth + 1, key: -1..<(-1)) }
        } else if tag == .keyed {
            // Keys are compared with the container's earlier keys (its
            // values' nodes, already on the tape) in a small container,
            // through a set in a large one, so n keys cost O(n), not O(n²).
            var seen: Set<[UInt8]>? = count > 16 ? [] : nil
            for _ in 0..<count {
                let key = try self.key()
                if seen != nil {
                    guard seen!.insert(Array(body[key])).inserted else { throw duplicate(key) }
                } else {
                    var earlier = index + 1
                    while earlier < tape.count {
                        let range = Int(tape[earlier].keyStart)..<Int(tape[earlier].keyStart + tape[earlier].keyLength)
                        if body[range].elementsEqual(body[key]) { throw duplicate(key) }
                        earlier = Int(tape[earlier].end)
                    }
                }
                try value(depth: depth + 1, key: key)
            }
        }
        tape[index].end = Int32(tape.count)
    }

    private mutating func rightIndex(_ tag: MessageCodingFormat.Tag, at: Int) throws(MessageCodingError) -> UInt64 {
        let right = try varint()
        guard right < UInt64(rightKinds.count) else {
            throw MessageCodingError(.invalidRightIndex,
                                     "right \(right) at offset \(at); the message carries \(rightKinds.count)")
        }
        let expected: CarriedRightKind = switch tag {
        case .sendRight: .send
        case .sendOnceRight: .sendOnce
        default: .receive
        }
        guard rightKinds[Int(right)] == expected else {
            throw MessageCodingError(.invalidRightIndex,
                                     "right \(right) at offset \(at) is named as \(expected) but is \(rightKinds[Int(right)])")
        }
        guard !rightUsed[Int(right)] else {
            throw MessageCodingError(.invalidRightIndex, "right \(right) named twice (offset \(at))")
        }
        rightUsed[Int(right)] = true
        return right
    }

    private func duplicate(_ key: Range<Int>) -> MessageCodingError {
        MessageCodingError(.malformedBody, "key \"\(String(decoding: body[key], as: UTF8.self))\" twice in one container")
    }

    private mutating func byte() throws(MessageCodingError) -> UInt8 {
        guard offset < body.count else { throw MessageCodingError(.malformedBody, "the body ends early") }
        defer { offset += 1 }
        return body[offset]
    }

    /// A LEB128 varint of at most 64 bits.
    private mutating func varint() throws(MessageCodingError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try self.byte()
            if shift == 63, byte > 1 {
                throw MessageCodingError(.malformedBody, "a varint longer than 64 bits at offset \(offset - 1)")
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// A length that the rest of the body holds.
    private mutating func length() throws(MessageCodingError) -> Int {
        let at = offset
        let length = try varint()
        guard length <= UInt64(remaining) else {
            throw MessageCodingError(.malformedBody, "a length of \(length) at offset \(at) runs past the body's end")
        }
        return Int(length)
    }

    private mutating func fixed(_ count: Int) throws(MessageCodingError) -> UInt64 {
        guard remaining >= count else { throw MessageCodingError(.malformedBody, "the body ends early") }
        var value: UInt64 = 0
        for position in 0..<count { value |= UInt64(body[offset + position]) << (8 * position) }
        offset += count
        return value
    }

    /// A string's length and UTF-8, checked; its index in ``strings``.
    private mutating func string() throws(MessageCodingError) -> Int {
        let at = offset
        let length = try length()
        let bytes = UnsafeRawBufferPointer(rebasing: body[offset..<(offset + length)])
        // ASCII (the usual case) needs no further check and decodes fastest.
        let string = Self.isASCII(bytes) ? String(decoding: bytes, as: UTF8.self)
            : String(validating: bytes, as: UTF8.self)
        guard let string else { throw MessageCodingError(.malformedBody, "a string at offset \(at) is not UTF-8") }
        offset += length
        strings.append(string)
        return strings.count - 1
    }

    /// A key's length and UTF-8, checked; where its bytes are.
    private mutating func key() throws(MessageCodingError) -> Range<Int> {
        let at = offset
        let length = try length()
        let range = offset..<(offset + length)
        let bytes = UnsafeRawBufferPointer(rebasing: body[range])
        guard Self.isASCII(bytes) || String(validating: bytes, as: UTF8.self) != nil else {
            throw MessageCodingError(.malformedBody, "a key at offset \(at) is not UTF-8")
        }
        offset += length
        return range
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var any: UInt8 = 0
        for byte in bytes { any |= byte }
        return any < 0x80
    }
}
