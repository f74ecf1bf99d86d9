// Harbor — a capture record's bytes: what each packet of a Harbor capture
// holds (Docs/Capture.md, "The record"), written by `encode` and read back by
// `decode` (tests, tools), and by the Wireshark dissector
// (Tools/wireshark/harbor.lua).
import HarborPorts
import HarborSystem

/// The binary form of a `PortCaptureRecord` (HarborPorts), version 1: a fixed
/// little-endian header of ``headerLength`` bytes, then the sizes of the
/// first out-of-line regions (8 bytes each), then the body's prefix.
/// Docs/Capture.md gives every field's offset.
///
/// Every count is stored saturated to its field (a body of more than 4 GiB
/// shows as `UInt32.max` bytes), so any record encodes; a record's size is
/// bounded by ``headerLength`` + 8 × ``maximumListedRegions`` + its prefix.
public enum CaptureRecordFormat {
    /// The version this library writes, and the only one it reads.
    public static let version: UInt8 = 1
    /// The fixed header's length in bytes (a reader skips to this offset, so
    /// later versions may add fields before it).
    public static let headerLength = 112
    /// The most region sizes listed one by one (the header counts them all,
    /// and their total).
    public static let maximumListedRegions = 64

    /// What the record says happened. Only admission is recorded today.
    public enum Direction: UInt8, Sendable {
        /// The message joined the tapped port's queue (or went straight to
        /// a receiver waiting on it).
        case admitted = 0
    }

    /// The header's flag bits.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        /// A notification the runtime generated.
        public static let notification = Flags(rawValue: 1 << 0)
        /// The message counts against the queue limit (not sent to a send-once right).
        public static let counted = Flags(rawValue: 1 << 1)
        /// Relayed inside a moved receive right: the relay fields are set.
        public static let relayed = Flags(rawValue: 1 << 2)
        /// The body prefix is shorter than the body.
        public static let truncated = Flags(rawValue: 1 << 3)
    }

    /// The reply right's code in the header.
    static func replyCode(_ kind: CarriedRightKind?) -> UInt8 {
        switch kind {
        case .send: 1
        case .sendOnce: 2
        case .receive: 3
        case .taken, nil: 0
        }
    }

    /// `record` as version-1 bytes.
    public static func encode(_ record: PortCaptureRecord) -> [UInt8] {
        let listed = min(record.regionSizes.count, maximumListedRegions)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerLength + 8 * listed + record.bodyPrefix.count)
        var flags: Flags = []
        if record.isNotification { flags.insert(.notification) }
        if record.countsAgainstLimit { flags.insert(.counted) }
        if record.relayedBy != nil { flags.insert(.relayed) }
        if record.bodyPrefix.count < record.bodySize { flags.insert(.truncated) }
        bytes.append(version)
        bytes.append(Direction.admitted.rawValue)
        append(flags.rawValue, to: &bytes)
        append(UInt16(headerLength), to: &bytes)
        append(UInt16(listed), to: &bytes)
        append(record.port.rawValue, to: &bytes)
        append(record.index, to: &bytes)
        append(UInt64(bitPattern: record.monotonicNanoseconds), to: &bytes)
        append(UInt32(bitPattern: record.id), to: &bytes)
        append(UInt32(clamping: record.bodySize), to: &bytes)
        append(UInt32(clamping: record.bodyPrefix.count), to: &bytes)
        append(UInt32(clamping: record.queueDepth), to: &bytes)
        for identity in [record.sender, record.relayedBy, record.claimedOriginalSender] {
            append(UInt32(bitPattern: identity?.pid ?? 0), to: &bytes)
            append(UInt32(identity?.uid ?? 0), to: &bytes)
            append(UInt32(identity?.gid ?? 0), to: &bytes)
        }
        append(UInt16(clamping: record.sendRights), to: &bytes)
        append(UInt16(clamping: record.sendOnceRights), to: &bytes)
        append(UInt16(clamping: record.receiveRights), to: &bytes)
        bytes.append(replyCode(record.replyRight))
        bytes.append(0)
        append(UInt16(clamping: record.files), to: &bytes)
        append(UInt16(clamping: record.regionSizes.count), to: &bytes)
        var total: UInt64 = 0
        for size in record.regionSizes { total = total.addingReportingOverflow(UInt64(clamping: size)).partialValue }
        append(total, to: &bytes)
        append(record.droppedBefore, to: &bytes)
        for size in record.regionSizes.prefix(listed) { append(UInt64(clamping: size), to: &bytes) }
        bytes.append(contentsOf: record.bodyPrefix.prefix(Int(UInt32.max)))
        return bytes
    }

    /// Reads a version-1 record back (the wall time is not in it: a capture
    /// file keeps it as the packet's timestamp, passed as `wallNanoseconds`).
    /// Region sizes past the listed ones read as absent.
    /// - Throws: ``CaptureFormatError`` for bytes that are not such a record.
    public static func decode(_ bytes: [UInt8], wallNanoseconds: Int64 = 0) throws(CaptureFormatError) -> PortCaptureRecord {
        let reader = LittleEndianReader(bytes)
        guard bytes.count >= headerLength else {
            throw CaptureFormatError("a record of \(bytes.count) bytes is shorter than its \(headerLength)-byte header")
        }
        let recordVersion = reader.byte(at: 0)
        guard recordVersion == version else { throw CaptureFormatError("record version \(recordVersion); this reads \(version)") }
        let flags = Flags(rawValue: reader.u16(at: 2))
        let length = Int(reader.u16(at: 4))
        let listed = Int(reader.u16(at: 6))
        let prefixLength = Int(reader.u32(at: 40))
        guard length >= headerLength, length + 8 * listed + prefixLength == bytes.count else {
            throw CaptureFormatError("a record's lengths (header \(length), \(listed) regions, prefix \(prefixLength)) "
                                     + "do not add up to its \(bytes.count) bytes")
        }
        func identity(at offset: Int) -> ProcessIdentity {
            ProcessIdentity(pid: Int32(bitPattern: reader.u32(at: offset)), uid: reader.u32(at: offset + 4),
                            gid: reader.u32(at: offset + 8))
        }
        let reply: CarriedRightKind? = switch reader.byte(at: 90) {
        case 1: .send
        case 2: .sendOnce
        case 3: .receive
        default: nil
        }
        var regionSizes: [Int] = []
        for index in 0..<listed { regionSizes.append(Int(clamping: reader.u64(at: length + 8 * index))) }
        let relayed = flags.contains(.relayed)
        return PortCaptureRecord(
            index: reader.u64(at: 16), port: PortName(rawValue: reader.u64(at: 8)),
            monotonicNanoseconds: Int64(bitPattern: reader.u64(at: 24)), wallNanoseconds: wallNanoseconds,
            id: Int32(bitPattern: reader.u32(at: 32)), bodySize: Int(reader.u32(at: 36)),
            bodyPrefix: Array(bytes[(length + 8 * listed)...]),
            sendRights: Int(reader.u16(at: 84)), sendOnceRights: Int(reader.u16(at: 86)),
            receiveRights: Int(reader.u16(at: 88)), replyRight: reply, files: Int(reader.u16(at: 92)),
            regionSizes: regionSizes, sender: identity(at: 48),
            relayedBy: relayed ? identity(at: 60) : nil, claimedOriginalSender: relayed ? identity(at: 72) : nil,
            isNotification: flags.contains(.notification), countsAgainstLimit: flags.contains(.counted),
            queueDepth: Int(reader.u32(at: 44)), droppedBefore: reader.u64(at: 104))
    }

    static func append<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        var little = value.littleEndian
        withUnsafeBytes(of: &little) { bytes.append(contentsOf: $0) }
    }
}
