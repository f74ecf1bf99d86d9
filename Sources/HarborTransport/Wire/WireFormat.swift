// Harbor — the wire format's constants and byte-level reading and writing.
//
// Docs/WireFormat.md is the specification; this file, WireHeader.swift and
// WirePacket.swift must agree with it. All integers are little-endian.
import HarborSystem
import HarborPorts

/// Constants of wire format version 1.
package enum WireFormat {
    package static let version: UInt8 = 1
    package static let headerSize = WireHeader.size
    package static let entrySize = 32
    package static let transferHeaderSize = 32
    package static let connectionEntrySize = 8
    /// Nested queued messages inside a moved receive right go this deep at most.
    package static let maximumNesting = 4
    /// The largest sequence number or make-send count a transfer record may
    /// carry. The receiver adds one per message or send right; from a
    /// peer's u64 that addition could overflow (a trap), and no real port
    /// gets near 2^62 (a billion messages a second for 146 years).
    package static let maximumCounter: UInt64 = 1 << 62
    /// The most bytes one inline packet may hold; larger packets travel in a
    /// sealed memfd (flag `inMemoryFile`). Fits the receive buffer with room.
    package static let maximumInlinePacket = 96 * 1024
    /// The most bytes a packet in a memfd may hold.
    package static let maximumMemoryFilePacket = 1 << 30
    /// The most bytes of copied regions one fragmented message may carry.
    package static let maximumFragmentedPayload = 1 << 30
    /// The most region bytes one fragment packet carries: it fits the
    /// receiver's packet buffer like any inline packet.
    package static let maximumFragmentData = maximumInlinePacket - headerSize
    /// Fragmented messages being reassembled at once on one connection (one
    /// per sending process; a connection is shared only by processes that
    /// were given the same send right).
    package static let maximumAssemblies = 4

    package enum Kind: UInt8 {
        case message = 1
        case wait = 2
        /// Region bytes of the fragmented message its sender is sending.
        case fragment = 3
    }

    package struct Flags: OptionSet {
        package let rawValue: UInt16
        package init(rawValue: UInt16) { self.rawValue = rawValue }
        package static let countsAgainstLimit = Flags(rawValue: 1)
        package static let hasReply = Flags(rawValue: 2)
        package static let inMemoryFile = Flags(rawValue: 4)
        /// Copied regions follow in fragment packets.
        package static let continued = Flags(rawValue: 8)
        /// The packet moves receive rights, whose transfer records carry
        /// notification requests and queued messages' original senders.
        /// Required with any receive entry, so a receiver that predates
        /// these records refuses the packet (unknown flag) rather than
        /// misreading it.
        package static let transfers = Flags(rawValue: 0x10)
        package static let known: Flags = [.countsAgainstLimit, .hasReply, .inMemoryFile, .continued, .transfers]
    }

    package enum RightKind: UInt8 {
        case send = 1
        case sendOnce = 2
        case receive = 3
        case taken = 4
        /// Not a right: an out-of-line region (one sealed memfd).
        case memory = 5
        /// Not a right: a copied region, its bytes in the fragments that follow.
        case copiedRegion = 6
        /// Not a right: an open file the message carries (one descriptor),
        /// after the regions, before the reply right.
        case file = 7
    }

    /// Bits of an entry's u16 at offset 2 (zero in every other entry).
    package struct EntryFlags: OptionSet {
        package let rawValue: UInt16
        package init(rawValue: UInt16) { self.rawValue = rawValue }
        /// A send entry whose bytes 24–31 name its slot counter's file
        /// (u32 device, u32 inode) as its sender found it: believed only
        /// from a name server the receiver trusts (``SlotCounterVouch``).
        package static let vouched = EntryFlags(rawValue: 1)
        package static let known: EntryFlags = [.vouched]
    }

    package enum ConnectionKind: UInt8 {
        case send = 1
        case sendOnce = 2
    }

    /// A notification request travelling with a moved receive right.
    package enum RequestKind: UInt8 {
        case noSenders = 1
        case portDestroyed = 2
    }

    /// A request in a transfer record: kind, descriptor index, identity.
    package static let requestEntrySize = 24
    /// A queued message's original sender in a transfer record.
    package static let relayedSenderSize = 16
}

/// Appends little-endian integers and bytes to a growing buffer.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func append<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append(contentsOf other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Appends `count` zero bytes (room for a header written in place).
    package mutating func appendZeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }

    /// Overwrites a value written earlier (lengths known only at the end).
    package mutating func patch<Value: FixedWidthInteger>(_ value: Value, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }

    package var count: Int { bytes.count }
}

/// Reads little-endian integers from untrusted bytes; every read is bounds
/// checked and fails with a typed reason instead of trapping.
package struct ByteReader {
    package let base: UnsafeRawBufferPointer
    package private(set) var offset: Int

    package init(_ base: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = base
        self.offset = offset
    }

    package var remaining: Int { base.count - offset }

    /// Inlined into the parsers: a packet's header and entries are a few
    /// dozen of these; the refusal is made out of line.
    @inline(__always)
    package mutating func read<Value: FixedWidthInteger>(_: Value.Type) throws(WireRejection) -> Value {
        let size = MemoryLayout<Value>.size
        guard remaining >= size else { throw truncated(wanting: size) }
        let value = base.loadUnaligned(fromByteOffset: offset, as: Value.self)
        offset += size
        return Value(littleEndian: value)
    }

    /// Reads a u32 length, count or index as an `Int`. On a platform whose
    /// `Int` has 32 bits a value past `Int.max` is refused here, where
    /// `Int(_:)` would trap on it.
    package mutating func readLength() throws(WireRejection) -> Int {
        let value = try read(UInt32.self)
        guard let length = Int(exactly: value) else { throw WireRejection(.badLength, "\(value) does not fit an Int") }
        return length
    }

    @inline(__always)
    package mutating func skip(_ count: Int) throws(WireRejection) {
        guard count >= 0, remaining >= count else { throw truncated(wanting: count) }
        offset += count
    }

    /// The refusal of a read past the end.
    @inline(never)
    private func truncated(wanting count: Int) -> WireRejection {
        WireRejection(.truncated, "wanted \(count) bytes at \(offset)")
    }
}
