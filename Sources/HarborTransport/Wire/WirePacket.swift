// Harbor — decoding a packet from another process, as hostile input (P09).
//
// Parsing is pure: it checks every length, count, kind and descriptor index
// against the bytes and the descriptors that actually arrived, and produces
// offsets and indices only. Nothing is allocated from the kernel and no
// descriptor is claimed until the whole packet has passed.
import HarborSystem
import HarborPorts

/// A parsed packet: where its parts are and which descriptors each right owns.
package struct WirePacket {
    package var kind: WireFormat.Kind
    package var flags: WireFormat.Flags
    package var id: Int32
    /// The body's byte range within the parsed buffer.
    package var body: Range<Int>
    package var rights: [WireRight]
    package var reply: WireRight?
    /// Out-of-line regions, in order.
    package var regions: [WireRegion] = []
    /// Carried files: each one's descriptor index, in order.
    package var files: [Int] = []
    /// For a message queued on a moved port: its original sender, as the
    /// port's previous holder vouches (never trusted as kernel-verified).
    package var relayedSender: ProcessIdentity?
}

/// One out-of-line region of a parsed packet.
package enum WireRegion {
    /// A sealed memfd: its descriptor index.
    case file(Int)
    /// A copied region of this many bytes, sent in the fragments that follow.
    case copied(Int)
}

/// One carried right: its kind, its port's identity and its descriptors.
package struct WireRight {
    package var kind: WireFormat.RightKind
    /// Index of the right's first descriptor in the packet's descriptor array.
    package var firstDescriptor: Int
    package var descriptorCount: Int
    package var identity: PortIdentity
    /// For a moved receive right: the port's state and queue.
    package var transfer: WireTransfer?
    /// For a send right: its sender's word on its slot counter's file
    /// (flag `vouched`), believed only from a trusted name server.
    package var vouch: SlotCounterVouch?
}

extension WireRight {
    var isRegion: Bool { kind == .memory || kind == .copiedRegion }
    var isFile: Bool { kind == .file }
}

/// A moved receive right's state: attributes, connections and queued messages.
package struct WireTransfer {
    package var queueLimit: Int
    package var sequenceNumber: UInt64
    package var madeSendRights: UInt64
    package var connections: [(kind: WireFormat.ConnectionKind, descriptor: Int)]
    /// Notification requests: each a send-once right (one descriptor).
    package var requests: [(kind: WireFormat.RequestKind, descriptor: Int, identity: PortIdentity)]
    package var queued: [WirePacket]
}

extension WirePacket {
    /// Parses a whole packet of `bytes` that arrived with `descriptorCount`
    /// descriptors; every descriptor must be referenced exactly once.
    package static func parse(_ bytes: UnsafeRawBufferPointer, descriptorCount: Int) throws(WireRejection) -> WirePacket {
        var used = DescriptorUse(count: descriptorCount)
        var reader = ByteReader(bytes)
        let packet = try parse(&reader, end: bytes.count, used: &used, depth: 0, topLevel: true)
        guard reader.offset == bytes.count else {
            throw WireRejection(.badLength, "\(bytes.count - reader.offset) bytes after the packet")
        }
        if let unused = used.firstUnused {
            throw WireRejection(.descriptorMismatch, "descriptor \(unused) of \(descriptorCount) is not referenced")
        }
        return packet
    }

    private static func parse(
        _ reader: inout ByteReader, end: Int, used: inout DescriptorUse, depth: Int, topLevel: Bool
    ) throws(WireRejection) -> WirePacket {
        let start = reader.offset
        guard start <= end, end <= reader.base.count else { throw WireRejection(.truncated, "packet past its bytes") }
        let header = try WireHeader.decode(
            UnsafeRawBufferPointer(rebasing: reader.base[start..<end]), validating: end - start)
        try reader.skip(WireHeader.size)
        let kind = header.kind, flags = header.flags
        let bodyLength = header.bodyLength, rightCount = header.entryCount
        let declaredDescriptors = header.descriptorCount
        let nestedLength = header.nestedLength, totalLength = header.totalLength
        if topLevel && declaredDescriptors != used.count {
            throw WireRejection(.descriptorMismatch, "declares \(declaredDescriptors) descriptors, \(used.count) arrived")
        }
        guard !flags.contains(.inMemoryFile) else {
            throw WireRejection(.unknownKind, "memory-file flag inside a packet")
        }
        let maximumRights = Message.maximumCarriedRights + 1 + Message.maximumRegions + Message.maximumCarriedFiles
        guard rightCount <= maximumRights, rightCount <= (end - start) / WireFormat.entrySize else {
            throw WireRejection(.badLength, "\(rightCount) rights")
        }
        // Compared by subtraction: a sum of peer lengths could overflow
        // where `Int` has 32 bits (the fixed part is small: counts checked).
        let fixed = WireFormat.headerSize + rightCount * WireFormat.entrySize
        guard bodyLength <= Message.maximumBodySize, fixed + bodyLength <= totalLength,
              nestedLength == totalLength - fixed - bodyLength else {
            throw WireRejection(.badLength, "parts add up to \(fixed + bodyLength) + \(nestedLength), packet is \(totalLength)")
        }
        guard kind != .fragment else { throw WireRejection(.unknownKind, "fragment parsed as a packet") }
        if kind == .wait {
            guard header.isWait, topLevel, used.count == 1 else {
                throw WireRejection(.badLength, "a wait packet carries exactly one descriptor and nothing else")
            }
            used.markUsed(0)
            return WirePacket(kind: kind, flags: flags, id: header.id, body: reader.offset..<reader.offset, rights: [])
        }
        guard !flags.contains(.hasReply) || rightCount > 0 else {
            throw WireRejection(.badLength, "reply flag without a right")
        }
        // Entries first, then the body, then the nested section they point into.
        // Read twice (checked, then used) rather than kept in an array:
        // no allocation for what a second look at the same bytes gives.
        let entriesStart = reader.offset
        for _ in 0..<rightCount { _ = try readEntry(&reader) }
        let bodyStart = reader.offset
        try reader.skip(bodyLength)
        let nestedStart = reader.offset
        try reader.skip(nestedLength)
        var rights: [WireRight] = []
        rights.reserveCapacity(rightCount)
        var entryReader = ByteReader(reader.base, offset: entriesStart)
        for _ in 0..<rightCount {
            let (rightKind, first, count, identity, nestedOffset, nestedSize, vouch) = try readEntry(&entryReader)
            let wanted: ClosedRange<Int> = switch rightKind {
            case .send: 2...2
            case .sendOnce: 1...1
            case .receive: 1...1
            case .taken: 0...0
            case .memory: 1...1
            case .copiedRegion: 0...0
            case .file: 1...1
            }
            guard wanted.contains(count) else {
                throw WireRejection(.descriptorMismatch, "a \(rightKind) right with \(count) descriptors")
            }
            try claim(first, count: count, in: &used)
            var transfer: WireTransfer?
            if rightKind == .receive {
                guard depth < WireFormat.maximumNesting else { throw WireRejection(.tooDeep, "depth \(depth)") }
                guard flags.contains(.transfers) else {
                    throw WireRejection(.unknownKind, "a receive right without the transfers flag")
                }
                guard nestedOffset >= 0, nestedSize >= WireFormat.transferHeaderSize,
                      nestedOffset <= nestedLength, nestedSize <= nestedLength - nestedOffset else {
                    throw WireRejection(.badLength, "transfer at \(nestedOffset)+\(nestedSize) of \(nestedLength)")
                }
                var nested = ByteReader(reader.base, offset: nestedStart + nestedOffset)
                transfer = try parseTransfer(&nested, end: nestedStart + nestedOffset + nestedSize, used: &used, depth: depth)
            } else if nestedOffset != 0 || nestedSize != 0 {
                throw WireRejection(.badLength, "a \(rightKind) right with a transfer")
            }
            if rightKind == .file && identity != PortIdentity(origin: 0, number: 0) {
                throw WireRejection(.badLength, "a file entry with an identity")
            }
            rights.append(WireRight(kind: rightKind, firstDescriptor: first, descriptorCount: count,
                                    identity: identity, transfer: transfer, vouch: vouch))
        }
        // Carried files: after the regions, before the reply; taken out
        // first, so what is left is rights, regions, reply as before.
        var files: [Int] = []
        if let firstFile = rights.firstIndex(where: \.isFile) {
            let tail = rights[firstFile...]
            let isReplyLast = flags.contains(.hasReply) && tail.last?.isFile == false
            let fileEntries = isReplyLast ? tail.dropLast() : tail[...]
            guard fileEntries.count <= Message.maximumCarriedFiles, fileEntries.allSatisfy(\.isFile) else {
                throw WireRejection(.badLength, "files must follow the rights and regions, before the reply")
            }
            files = fileEntries.map(\.firstDescriptor)
            rights.removeSubrange(firstFile..<(firstFile + fileEntries.count))
        }
        var regions: [WireRegion] = []
        var copiedBytes = 0
        if let firstRegion = rights.firstIndex(where: \.isRegion) {
            let tail = rights[firstRegion...]
            let isReplyLast = flags.contains(.hasReply) && tail.last?.isRegion == false
            let regionEntries = isReplyLast ? tail.dropLast() : tail[...]
            guard regionEntries.count <= Message.maximumRegions,
                  regionEntries.allSatisfy(\.isRegion),
                  rights[..<firstRegion].allSatisfy({ !$0.isRegion }) else {
                throw WireRejection(.badLength, "regions must follow the rights, before the reply")
            }
            for entry in regionEntries {
                if entry.kind == .memory {
                    regions.append(.file(entry.firstDescriptor))
                    continue
                }
                // A copied region's length is in the identity's first word.
                guard topLevel, entry.identity.number == 0, entry.identity.origin > 0,
                      entry.identity.origin <= UInt64(WireFormat.maximumFragmentedPayload - copiedBytes) else {
                    throw WireRejection(.badLength, "copied region of \(entry.identity.origin) bytes")
                }
                copiedBytes += Int(entry.identity.origin)
                regions.append(.copied(Int(entry.identity.origin)))
            }
            rights.removeSubrange(firstRegion..<(firstRegion + regionEntries.count))
        }
        let hasCopied = regions.contains { if case .copied = $0 { true } else { false } }
        guard hasCopied == flags.contains(.continued) else {
            throw WireRejection(.badLength, "the continued flag and the copied regions disagree")
        }
        var reply: WireRight?
        if flags.contains(.hasReply) {
            // The entry count was checked before the regions were taken out:
            // a packet whose only entries are regions has no right left here.
            guard let last = rights.popLast() else {
                throw WireRejection(.badLength, "reply flag, but every entry is a region or a file")
            }
            guard last.kind == .send || last.kind == .sendOnce else {
                throw WireRejection(.unknownKind, "a reply right must be send or send-once")
            }
            reply = last
        }
        // The entry count allows a reply and regions besides; the rights
        // alone are held to what a sender may attach (PeerLimits).
        guard rights.count <= Message.maximumCarriedRights else {
            throw WireRejection(.badLength, "\(rights.count) rights, over the limit of \(Message.maximumCarriedRights)")
        }
        return WirePacket(kind: kind, flags: flags, id: header.id, body: bodyStart..<(bodyStart + bodyLength),
                          rights: rights, reply: reply, regions: regions, files: files)
    }

    /// One right entry: kind, first descriptor, descriptor count,
    /// identity, nested offset and size, and a send right's vouch (whose
    /// bytes stand where the nested offset and size would: those are 0).
    @inline(__always)
    private static func readEntry(
        _ reader: inout ByteReader
    ) throws(WireRejection) -> (WireFormat.RightKind, Int, Int, PortIdentity, Int, Int, SlotCounterVouch?) {
        let rawRight = try reader.read(UInt8.self)
        guard let rightKind = WireFormat.RightKind(rawValue: rawRight) else {
            throw WireRejection(.unknownKind, "right kind \(rawRight)")
        }
        let count = Int(try reader.read(UInt8.self))
        let entryFlags = WireFormat.EntryFlags(rawValue: try reader.read(UInt16.self))
        guard entryFlags.isSubset(of: .known), entryFlags.isEmpty || rightKind == .send else {
            throw WireRejection(.unknownKind, "entry flags \(entryFlags.rawValue) on a \(rightKind) right")
        }
        let first = try reader.readLength()
        let identity = PortIdentity(origin: try reader.read(UInt64.self), number: try reader.read(UInt64.self))
        if entryFlags.contains(.vouched) {
            let vouch = SlotCounterVouch(device: try reader.read(UInt32.self), inode: try reader.read(UInt32.self))
            return (rightKind, first, count, identity, 0, 0, vouch)
        }
        let nestedOffset = try reader.readLength()
        let nestedSize = try reader.readLength()
        return (rightKind, first, count, identity, nestedOffset, nestedSize, nil)
    }

    private static func parseTransfer(
        _ reader: inout ByteReader, end: Int, used: inout DescriptorUse, depth: Int
    ) throws(WireRejection) -> WireTransfer {
        let queueLimit = try reader.readLength()
        let connectionCount = try reader.readLength()
        let queuedCount = try reader.readLength()
        let requestCount = try reader.readLength()
        let sequenceNumber = try reader.read(UInt64.self)
        let madeSendRights = try reader.read(UInt64.self)
        guard queueLimit <= PortStateMachine.maximumQueueLimit,
              sequenceNumber <= WireFormat.maximumCounter, madeSendRights <= WireFormat.maximumCounter,
              connectionCount <= SeqPacketSocket.maximumDescriptors,
              queuedCount <= PortStateMachine.maximumQueueLimit * 2,
              requestCount <= 2,
              connectionCount * WireFormat.connectionEntrySize + requestCount * WireFormat.requestEntrySize
                <= end - reader.offset else {
            throw WireRejection(.badLength, "transfer of \(connectionCount) connections, \(queuedCount) messages, "
                                + "sequence number \(sequenceNumber), \(madeSendRights) send rights made")
        }
        var connections: [(kind: WireFormat.ConnectionKind, descriptor: Int)] = []
        for _ in 0..<connectionCount {
            let rawKind = try reader.read(UInt8.self)
            guard let kind = WireFormat.ConnectionKind(rawValue: rawKind) else {
                throw WireRejection(.unknownKind, "connection kind \(rawKind)")
            }
            try reader.skip(3)
            let descriptor = try reader.readLength()
            try claim(descriptor, count: 1, in: &used)
            connections.append((kind, descriptor))
        }
        var requests: [(kind: WireFormat.RequestKind, descriptor: Int, identity: PortIdentity)] = []
        for _ in 0..<requestCount {
            let rawKind = try reader.read(UInt8.self)
            guard let kind = WireFormat.RequestKind(rawValue: rawKind), !requests.contains(where: { $0.kind == kind })
            else { throw WireRejection(.unknownKind, "notification request kind \(rawKind)") }
            try reader.skip(3)
            let descriptor = try reader.readLength()
            let identity = PortIdentity(origin: try reader.read(UInt64.self), number: try reader.read(UInt64.self))
            try claim(descriptor, count: 1, in: &used)
            requests.append((kind, descriptor, identity))
        }
        var queued: [WirePacket] = []
        for _ in 0..<queuedCount {
            let length = try reader.readLength()
            let pid = try reader.read(Int32.self)
            let uid = try reader.read(UInt32.self)
            let gid = try reader.read(UInt32.self)
            _ = try reader.read(UInt32.self)
            guard length <= end - reader.offset else { throw WireRejection(.truncated, "queued message of \(length) bytes") }
            let messageEnd = reader.offset + length
            var packet = try parse(&reader, end: messageEnd, used: &used, depth: depth + 1, topLevel: false)
            guard reader.offset == messageEnd, packet.kind == .message else {
                throw WireRejection(.badLength, "queued message length disagrees")
            }
            packet.relayedSender = ProcessIdentity(pid: pid, uid: uid, gid: gid)
            queued.append(packet)
        }
        guard reader.offset == end else { throw WireRejection(.badLength, "transfer has \(end - reader.offset) extra bytes") }
        return WireTransfer(queueLimit: queueLimit, sequenceNumber: sequenceNumber, madeSendRights: madeSendRights,
                            connections: connections, requests: requests, queued: queued)
    }

    /// Parses a fragment packet: a header (kind `fragment`, body length =
    /// the data, everything else zero) and region bytes. Returns their range.
    package static func parseFragment(_ bytes: UnsafeRawBufferPointer, descriptorCount: Int) throws(WireRejection) -> Range<Int> {
        let header = try WireHeader.decode(bytes, validating: bytes.count)
        // Its shape first, then its descriptors, each refused for its own reason.
        var shape = header
        shape.descriptorCount = 0
        guard shape.isFragment else {
            throw WireRejection(.badLength, "fragment of \(header.bodyLength) bytes in a \(bytes.count)-byte packet")
        }
        guard header.descriptorCount == 0, descriptorCount == 0 else {
            throw WireRejection(.descriptorMismatch, "a fragment carries no descriptors")
        }
        return WireHeader.size..<header.totalLength
    }

    /// Marks `count` descriptors from index `first` used. The range is
    /// checked before it is formed: `first + count` of a peer's index
    /// could overflow where `Int` has 32 bits.
    private static func claim(_ first: Int, count: Int, in used: inout DescriptorUse) throws(WireRejection) {
        guard first >= 0, count >= 0, first <= used.count, count <= used.count - first else {
            throw WireRejection(.descriptorMismatch, "descriptor index \(first) (+\(count)) of \(used.count)")
        }
        for index in first..<(first + count) {
            guard !used.isUsed(index) else { throw WireRejection(.descriptorMismatch, "descriptor \(index) used twice") }
            used.markUsed(index)
        }
    }

    /// Which of a packet's descriptors its entries have referenced: a bit
    /// each, on the stack for up to 256 (the kernel passes 253 at most per
    /// packet); an array only past that.
    struct DescriptorUse {
        let count: Int
        private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var spill: [Bool]

        init(count: Int) {
            self.count = count
            spill = count > 256 ? [Bool](repeating: false, count: count) : []
        }

        /// Whether descriptor `index` (below `count`) is referenced.
        func isUsed(_ index: Int) -> Bool {
            if count > 256 { return spill[index] }
            let word = withUnsafeBytes(of: words) { $0.load(fromByteOffset: (index >> 6) * 8, as: UInt64.self) }
            return word & (1 << UInt64(index & 63)) != 0
        }

        /// Marks descriptor `index` (below `count`) referenced.
        mutating func markUsed(_ index: Int) {
            if count > 256 {
                spill[index] = true
                return
            }
            withUnsafeMutableBytes(of: &words) { raw in
                let offset = (index >> 6) * 8
                let word = raw.load(fromByteOffset: offset, as: UInt64.self) | (1 << UInt64(index & 63))
                raw.storeBytes(of: word, toByteOffset: offset, as: UInt64.self)
            }
        }

        /// The first descriptor not referenced, if any.
        var firstUnused: Int? { (0..<count).first { !isUsed($0) } }
    }
}
