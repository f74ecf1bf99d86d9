// harbor-adversary — packets written byte by byte, lies included.
//
// The adversary does not use Harbor's encoder: it writes what a hostile
// process would, from Docs/WireFormat.md alone, so a field can say anything
// (a count that disagrees, an identity it never held). Integers are
// little-endian.

/// Packet kinds, flags and entry kinds of wire format version 1.
enum Wire {
    static let version: UInt8 = 1
    static let headerSize = 24
    static let entrySize = 32
    static let maximumFragmentData = 96 * 1024 - 24

    enum Kind: UInt8 { case message = 1, wait = 2, fragment = 3 }

    enum Flag {
        static let counted: UInt16 = 1
        static let hasReply: UInt16 = 2
        static let inMemoryFile: UInt16 = 4
        static let continued: UInt16 = 8
        static let transfers: UInt16 = 16
    }

    /// Entry flags (offset 2 of an entry).
    enum EntryFlag {
        /// The sender's word on a send right's slot counter file: device
        /// and inode in bytes 24–31, believed only from a trusted name server.
        static let vouched: UInt16 = 1
    }

    enum EntryKind: UInt8 { case send = 1, sendOnce = 2, receive = 3, taken = 4, memory = 5, copied = 6 }
}

/// A port identity as the wire carries it: origin nonce and number.
struct Identity: Hashable, CustomStringConvertible {
    var origin: UInt64
    var number: UInt64

    /// A fresh identity for a "port" the adversary makes up (its own socket).
    static func fresh() -> Identity {
        Identity(origin: ownNonce, number: nextNumber())
    }

    private nonisolated(unsafe) static var counter: UInt64 = 1
    private static func nextNumber() -> UInt64 {
        counter += 1
        return counter
    }
    private static let ownNonce: UInt64 = UInt64.random(in: 1...UInt64.max) | 1

    var description: String { "\(String(origin, radix: 16)):\(number)" }
}

/// Appends little-endian integers.
struct Bytes {
    var bytes: [UInt8] = []

    mutating func put<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func put(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    mutating func zeros(_ count: Int) { bytes.append(contentsOf: repeatElement(0, count: count)) }
}

/// One entry: a right, a region or an empty slot, exactly as it will be written.
struct Entry {
    var kind: UInt8
    var descriptorCount: UInt8
    var first: UInt32
    var identity: Identity
    var flags: UInt16 = 0
    /// A receive entry's transfer record offset; a vouched send entry's slot counter device.
    var nestedOffset: UInt32 = 0
    /// A receive entry's transfer record length; a vouched send entry's slot counter inode.
    var nestedLength: UInt32 = 0

    static func send(_ identity: Identity, first: Int) -> Entry {
        Entry(kind: Wire.EntryKind.send.rawValue, descriptorCount: 2, first: UInt32(first), identity: identity)
    }

    static func sendOnce(_ identity: Identity, first: Int) -> Entry {
        Entry(kind: Wire.EntryKind.sendOnce.rawValue, descriptorCount: 1, first: UInt32(first), identity: identity)
    }

    static func memory(first: Int) -> Entry {
        Entry(kind: Wire.EntryKind.memory.rawValue, descriptorCount: 1, first: UInt32(first),
              identity: Identity(origin: 0, number: 0))
    }

    /// A copied region: its length where the identity's origin goes.
    static func copied(_ length: UInt64) -> Entry {
        Entry(kind: Wire.EntryKind.copied.rawValue, descriptorCount: 0, first: 0,
              identity: Identity(origin: length, number: 0))
    }
}

/// A whole packet: header fields, entries, body and nested section.
struct Packet {
    var kind: UInt8 = Wire.Kind.message.rawValue
    var flags: UInt16 = 0
    var id: Int32 = 0
    var entries: [Entry] = []
    var body: [UInt8] = []
    var nested: [UInt8] = []
    /// The descriptor count the header declares (the truth unless set).
    var declaredDescriptors: Int = 0
    /// Total length to write instead of the real one, to lie.
    var totalOverride: UInt32?
    /// Body and nested-section lengths to write instead of the real ones
    /// (a header whose bytes follow elsewhere, or never).
    var bodyLengthOverride: UInt32?
    var nestedLengthOverride: UInt32?

    /// The bytes: header, entries, body, nested.
    var encoded: [UInt8] {
        var out = Bytes()
        let total = Wire.headerSize + entries.count * Wire.entrySize + body.count + nested.count
        out.put(Wire.version)
        out.put(kind)
        out.put(flags)
        out.put(id)
        out.put(bodyLengthOverride ?? UInt32(body.count))
        out.put(UInt16(entries.count))
        out.put(UInt16(truncatingIfNeeded: declaredDescriptors))
        out.put(nestedLengthOverride ?? UInt32(nested.count))
        out.put(totalOverride ?? UInt32(total))
        for entry in entries {
            out.put(entry.kind)
            out.put(entry.descriptorCount)
            out.put(entry.flags)
            out.put(entry.first)
            out.put(entry.identity.origin)
            out.put(entry.identity.number)
            out.put(entry.nestedOffset)
            out.put(entry.nestedLength)
        }
        out.put(body)
        out.put(nested)
        return out.bytes
    }

    /// A wait packet: header only, one descriptor (an eventfd).
    static var wait: Packet {
        Packet(kind: Wire.Kind.wait.rawValue, declaredDescriptors: 1)
    }

    /// A fragment carrying `count` bytes of region data (the caller appends them).
    static func fragmentHeader(_ count: Int) -> [UInt8] {
        var out = Bytes()
        out.put(Wire.version)
        out.put(Wire.Kind.fragment.rawValue)
        out.put(UInt16(0))
        out.put(Int32(0))
        out.put(UInt32(count))
        out.put(UInt16(0))
        out.put(UInt16(0))
        out.put(UInt32(0))
        out.put(UInt32(Wire.headerSize + count))
        return out.bytes
    }
}

/// A moved receive right's transfer record (Docs/WireFormat.md).
struct Transfer {
    var queueLimit: UInt32
    var sequenceNumber: UInt64 = 0
    var madeSendRights: UInt64 = 0
    /// (kind 1 send / 2 send-once, descriptor index)
    var connections: [(UInt8, Int)] = []
    /// Queued messages: the sender the record claims, and a complete packet
    /// whose descriptor indices refer to the outer packet's descriptors.
    var queued: [(pid: Int32, uid: UInt32, gid: UInt32, packet: [UInt8])] = []
    /// The queue length to write instead of `queued.count`, to lie (or for
    /// records written elsewhere).
    var queuedCountOverride: Int?

    var encoded: [UInt8] {
        var out = Bytes()
        out.put(queueLimit)
        out.put(UInt32(connections.count))
        out.put(UInt32(queuedCountOverride ?? queued.count))
        out.put(UInt32(0))  // notification requests
        out.put(sequenceNumber)
        out.put(madeSendRights)
        for (kind, index) in connections {
            out.put(kind)
            out.zeros(3)
            out.put(UInt32(index))
        }
        for message in queued {
            out.put(Self.recordHeader(length: message.packet.count, pid: message.pid, uid: message.uid, gid: message.gid))
            out.put(message.packet)
        }
        return out.bytes
    }

    /// What precedes a queued message's packet: its length and the sender
    /// the record claims.
    static func recordHeader(length: Int, pid: Int32, uid: UInt32, gid: UInt32) -> [UInt8] {
        var out = Bytes()
        out.put(UInt32(length))
        out.put(pid)
        out.put(uid)
        out.put(gid)
        out.put(UInt32(0))
        return out.bytes
    }
}
