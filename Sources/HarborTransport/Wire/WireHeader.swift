// Harbor — the 24-byte packet header: the one place it is read and written.
//
// Docs/WireFormat.md, "Header". Every packet Harbor sends gets its header
// from `encode` (Transport/OutboundPacket.swift builds them), and every
// packet it receives is first read by `decode`, which checks what every
// packet must satisfy; what each kind of packet must satisfy besides is
// checked by the properties below, so no other file knows the offsets.
import HarborSystem
import HarborPorts

/// The header of one packet, as values.
package struct WireHeader: Equatable {
    package var kind: WireFormat.Kind
    package var flags: WireFormat.Flags
    package var id: Int32
    package var bodyLength: Int
    /// Entries: rights, then regions, then the reply right.
    package var entryCount: Int
    /// Descriptors that travel in `SCM_RIGHTS` with the packet.
    package var descriptorCount: Int
    /// Bytes of moved receive rights' state after the body.
    package var nestedLength: Int
    /// The whole packet: header, entries, body and nested section.
    package var totalLength: Int

    /// The header's size in bytes.
    package static let size = 24

    package init(
        kind: WireFormat.Kind, flags: WireFormat.Flags = [], id: Int32 = 0, bodyLength: Int = 0,
        entryCount: Int = 0, descriptorCount: Int = 0, nestedLength: Int = 0, totalLength: Int? = nil
    ) {
        self.kind = kind
        self.flags = flags
        self.id = id
        self.bodyLength = bodyLength
        self.entryCount = entryCount
        self.descriptorCount = descriptorCount
        self.nestedLength = nestedLength
        self.totalLength = totalLength
            ?? Self.size + entryCount * WireFormat.entrySize + bodyLength + nestedLength
    }

    // Field offsets (Docs/WireFormat.md).
    private static let versionOffset = 0, kindOffset = 1, flagsOffset = 2, idOffset = 4
    private static let bodyOffset = 8, entriesOffset = 12, descriptorsOffset = 14
    private static let nestedOffset = 16, totalOffset = 20

    // MARK: Writing

    /// Writes the header at the front of `raw` (at least `size` bytes, this
    /// process's own buffer). Lengths are this process's own and fit their
    /// fields (the encoder's limits keep them there).
    package func encode(into raw: UnsafeMutableRawBufferPointer) {
        precondition(raw.count >= Self.size, "a header needs \(Self.size) bytes")
        raw.storeBytes(of: WireFormat.version, toByteOffset: Self.versionOffset, as: UInt8.self)
        raw.storeBytes(of: kind.rawValue, toByteOffset: Self.kindOffset, as: UInt8.self)
        raw.storeBytes(of: flags.rawValue.littleEndian, toByteOffset: Self.flagsOffset, as: UInt16.self)
        raw.storeBytes(of: id.littleEndian, toByteOffset: Self.idOffset, as: Int32.self)
        raw.storeBytes(of: UInt32(bodyLength).littleEndian, toByteOffset: Self.bodyOffset, as: UInt32.self)
        raw.storeBytes(of: UInt16(entryCount).littleEndian, toByteOffset: Self.entriesOffset, as: UInt16.self)
        Self.store(descriptorCount: descriptorCount, into: raw)
        raw.storeBytes(of: UInt32(nestedLength).littleEndian, toByteOffset: Self.nestedOffset, as: UInt32.self)
        raw.storeBytes(of: UInt32(totalLength).littleEndian, toByteOffset: Self.totalOffset, as: UInt32.self)
    }

    /// The header's bytes on the stack: no allocation per packet.
    package var encoded: Encoded { Encoded(self) }

    /// A header's 24 bytes, stored inline.
    package struct Encoded {
        private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

        init(_ header: WireHeader) {
            withUnsafeMutableBytes(of: &words) { header.encode(into: $0) }
        }

        /// Calls `body` with the 24 bytes.
        package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            var copy = words
            return Swift.withUnsafeMutableBytes(of: &copy) { body(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Sets the descriptor count of a header already written at the front
    /// of `bytes` (known only once every right is exported).
    package static func setDescriptorCount(_ count: Int, in bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { store(descriptorCount: count, into: $0) }
    }

    private static func store(descriptorCount: Int, into raw: UnsafeMutableRawBufferPointer) {
        // Truncated as before: a count past 253 never travels inline (the
        // memory-file path refuses it first).
        raw.storeBytes(of: UInt16(truncatingIfNeeded: descriptorCount).littleEndian,
                       toByteOffset: descriptorsOffset, as: UInt16.self)
    }

    // MARK: Reading

    /// Reads the header at the front of `bytes`, a peer's, for a packet of
    /// `packetLength` bytes (`bytes` may hold only the header, the rest
    /// having landed elsewhere). Checks what every packet must satisfy:
    /// a whole header, version 1, a known kind and known flags, lengths
    /// that fit an `Int`, and a total length equal to the packet's. Never
    /// traps.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, validating packetLength: Int
    ) throws(WireRejection) -> WireHeader {
        guard bytes.count >= size, packetLength >= size else {
            throw WireRejection(.truncated, "\(min(bytes.count, packetLength)) bytes is shorter than a header")
        }
        let version = bytes[versionOffset]
        guard version == WireFormat.version else { throw WireRejection(.unknownVersion, "version \(version)") }
        let rawKind = bytes[kindOffset]
        guard let kind = WireFormat.Kind(rawValue: rawKind) else {
            throw WireRejection(.unknownKind, "packet kind \(rawKind)")
        }
        let flags = WireFormat.Flags(rawValue: load(bytes, flagsOffset, as: UInt16.self))
        guard WireFormat.Flags.known.isSuperset(of: flags) else {
            throw WireRejection(.unknownKind, "flags \(flags.rawValue)")
        }
        // `exactly`: where Int has 32 bits a peer's u32 may not fit, and
        // Int(_:) would trap (free where Int has 64 bits).
        guard let bodyLength = Int(exactly: load(bytes, bodyOffset, as: UInt32.self)),
              let nestedLength = Int(exactly: load(bytes, nestedOffset, as: UInt32.self)),
              let totalLength = Int(exactly: load(bytes, totalOffset, as: UInt32.self)) else {
            throw WireRejection(.badLength, "a length does not fit an Int")
        }
        guard totalLength == packetLength else {
            throw WireRejection(.badLength, "declares \(totalLength) bytes, has \(packetLength)")
        }
        return WireHeader(
            kind: kind, flags: flags, id: load(bytes, idOffset, as: Int32.self), bodyLength: bodyLength,
            entryCount: Int(load(bytes, entriesOffset, as: UInt16.self)),
            descriptorCount: Int(load(bytes, descriptorsOffset, as: UInt16.self)),
            nestedLength: nestedLength, totalLength: totalLength)
    }

    private static func load<Value: FixedWidthInteger>(
        _ bytes: UnsafeRawBufferPointer, _ offset: Int, as: Value.Type
    ) -> Value {
        Value(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Value.self))
    }

    /// Whether a packet's first bytes say it is a counted message, for a
    /// packet refused before (or instead of) being decoded: its sender took
    /// a slot that must go back. Reads kind and flags only, whatever else
    /// is wrong (a memory-file packet repeats the flag outside the file, so
    /// this holds even when the file was lost to MSG_CTRUNC).
    package static func claimsCountedMessage(_ bytes: UnsafeRawBufferPointer, byteCount: Int) -> Bool {
        guard byteCount >= flagsOffset + 2, bytes.count >= flagsOffset + 2,
              bytes[kindOffset] == WireFormat.Kind.message.rawValue else { return false }
        return load(bytes, flagsOffset, as: UInt16.self) & WireFormat.Flags.countsAgainstLimit.rawValue != 0
    }

    // MARK: What each kind of packet satisfies besides

    /// A plain message: only the limit flag, no entries, descriptors or
    /// nested section, a body within the limit, all of it after the header.
    package var isPlainMessage: Bool {
        kind == .message && WireFormat.Flags.countsAgainstLimit.isSuperset(of: flags)
            && entryCount == 0 && descriptorCount == 0 && nestedLength == 0
            && bodyLength <= Message.maximumBodySize && totalLength == Self.size + bodyLength
    }

    /// A fragment: region bytes (1 to `maximumFragmentData`) after the
    /// header, every other field zero.
    package var isFragment: Bool {
        kind == .fragment && flags.isEmpty && id == 0 && entryCount == 0 && descriptorCount == 0
            && nestedLength == 0 && bodyLength > 0 && bodyLength <= WireFormat.maximumFragmentData
            && totalLength == Self.size + bodyLength
    }

    /// A wait packet: one descriptor (an eventfd), nothing else.
    package var isWait: Bool {
        kind == .wait && flags.isEmpty && entryCount == 0 && descriptorCount == 1 && bodyLength == 0
            && nestedLength == 0 && totalLength == Self.size
    }

    /// The outer header of a packet in a memory file: a message header and
    /// nothing else, its descriptors the file and the inner packet's.
    package var isMemoryFileWrapper: Bool {
        kind == .message && flags.contains(.inMemoryFile) && totalLength == Self.size
    }
}
