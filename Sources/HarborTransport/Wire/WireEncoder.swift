// Harbor — encoding a message for another process (format: Docs/WireFormat.md).
import HarborSystem
import HarborPorts

/// A right made ready to leave the process: what goes in its entry and which
/// descriptors go in SCM_RIGHTS.
package struct ExportedRight {
    package var kind: WireFormat.RightKind
    package var identity: PortIdentity
    /// Descriptors to send, in order (a send right: socket then slots).
    package var descriptors: [SharedDescriptor]
    /// For a moved receive right: its state and queue.
    package var transfer: ExportedTransfer?
    /// For a send right from a name server: its slot counter's file.
    package var vouch: SlotCounterVouch?
    /// Puts the right back as it was, should the send carrying it fail
    /// (Transport/ExportJournal.swift); nil when nothing needs undoing.
    package var undo: (() -> Void)?

    package init(kind: WireFormat.RightKind, identity: PortIdentity, descriptors: [SharedDescriptor],
                 transfer: ExportedTransfer? = nil, vouch: SlotCounterVouch? = nil, undo: (() -> Void)? = nil) {
        self.kind = kind
        self.identity = identity
        self.descriptors = descriptors
        self.transfer = transfer
        self.vouch = vouch
        self.undo = undo
    }
}

/// A receive right's state as it leaves: the slots memfd travels as the
/// right's own descriptor; connections and the queued messages follow.
package struct ExportedTransfer {
    package var queueLimit: Int
    package var sequenceNumber: UInt64
    package var madeSendRights: UInt64
    package var connections: [(kind: WireFormat.ConnectionKind, socket: SharedDescriptor)]
    /// Notification requests travelling with the right: send-once rights.
    package var requests: [(kind: WireFormat.RequestKind, target: CarriedRight)] = []
    package var queued: [MessageContent]
}

/// Builds one packet: header and entries, body, nested transfers, and the
/// descriptor list they index into.
package struct WireEncoder {
    package private(set) var descriptors: [SharedDescriptor] = []
    /// Copied (private) regions of the top-level message, whose bytes follow
    /// the packet in fragments, in order (flag `continued`).
    package private(set) var fragmentRegions: [MappedRegion] = []
    private let export: (CarriedRight) throws(PortError) -> ExportedRight

    package init(export: @escaping (CarriedRight) throws(PortError) -> ExportedRight) {
        self.export = export
    }

    /// Encodes `content`; returns the packet's bytes before the body, and after it.
    package mutating func encode(
        _ content: MessageContent, kind: WireFormat.Kind = .message, nested: Bool = false
    ) throws(PortError) -> (head: [UInt8], tail: [UInt8]) {
        var flags: WireFormat.Flags = content.countsAgainstLimit ? [.countsAgainstLimit] : []
        var exported: [ExportedRight] = []
        exported.reserveCapacity(content.rights.count + content.regions.count + content.files.count + 1)
        for right in content.rights { exported.append(try export(right)) }
        // Regions after the rights, the reply right last (the decoder relies on it).
        for region in content.regions {
            if let file = region.descriptor {
                exported.append(ExportedRight(kind: .memory, identity: PortIdentity(origin: 0, number: 0),
                                              descriptors: [file]))
            } else if !nested && region.count > 0 {
                // Its length in the entry; its bytes in fragments after the packet.
                exported.append(ExportedRight(kind: .copiedRegion,
                                              identity: PortIdentity(origin: UInt64(region.count), number: 0),
                                              descriptors: []))
                fragmentRegions.append(region)
                flags.insert(.continued)
            } else {
                // A queued message inside a moved receive right cannot be
                // followed by fragments (nor can an empty region): its copy
                // goes in a sealed memfd.
                let sealed: MappedRegion
                do { sealed = try region.sealedCopy() } catch {
                    throw PortError(error, "sealing a copied region of a queued message")
                }
                guard let file = sealed.descriptor else { preconditionFailure("sealedCopy returns a memfd") }
                exported.append(ExportedRight(kind: .memory, identity: PortIdentity(origin: 0, number: 0),
                                              descriptors: [file]))
            }
        }
        // Carried files after the regions, one descriptor each, zero identity.
        for case let file? in content.files {
            exported.append(ExportedRight(kind: .file, identity: PortIdentity(origin: 0, number: 0),
                                          descriptors: [file.descriptor]))
        }
        if let reply = content.reply, reply.kind != .taken {
            exported.append(try export(reply))
            flags.insert(.hasReply)
        }

        if exported.contains(where: { $0.transfer != nil }) { flags.insert(.transfers) }
        // The header and the entries are written in place into one buffer
        // of their exact size (one allocation, no growth, no per-field
        // append); the header last, once the nested section's size is known.
        let entriesEnd = WireFormat.headerSize + exported.count * WireFormat.entrySize
        var head = Self.zeroedBuffer(count: entriesEnd)
        var nested = ByteWriter()
        var offset = WireFormat.headerSize
        for right in exported {
            let first = descriptors.count
            // The first right's array is taken as is (most messages carry one).
            if descriptors.isEmpty {
                descriptors = right.descriptors
            } else {
                descriptors.append(contentsOf: right.descriptors)
            }
            var nestedOffset = 0
            var nestedSize = 0
            if let transfer = right.transfer {
                nestedOffset = nested.count
                try encodeTransfer(transfer, into: &nested)
                nestedSize = nested.count - nestedOffset
            }
            let entry = offset
            head.withUnsafeMutableBytes { raw in
                Self.writeEntry(into: raw, at: entry, kind: right.kind, descriptorCount: right.descriptors.count,
                                firstDescriptor: first, identity: right.identity,
                                nested: (offset: nestedOffset, size: nestedSize), vouch: right.vouch)
            }
            offset += WireFormat.entrySize
        }
        let total = entriesEnd + content.body.count + nested.count
        // The descriptor count is set by the caller once all are known.
        let header = WireHeader(kind: kind, flags: flags, id: content.id, bodyLength: content.body.count,
                                entryCount: exported.count, nestedLength: nested.count, totalLength: total)
        head.withUnsafeMutableBytes { header.encode(into: $0) }
        return (head, nested.bytes)
    }

    /// Writes one entry (Docs/WireFormat.md, "Entries") at byte `entry` of
    /// `raw` (zeroed): the right's kind, how many descriptors it has and
    /// the index of its first, its identity, and where its nested section
    /// lies, or, for a vouched send right, its flag and slot counter file.
    static func writeEntry(
        into raw: UnsafeMutableRawBufferPointer, at entry: Int, kind: WireFormat.RightKind, descriptorCount: Int,
        firstDescriptor: Int, identity: PortIdentity, nested: (offset: Int, size: Int) = (0, 0),
        vouch: SlotCounterVouch? = nil
    ) {
        raw.storeBytes(of: kind.rawValue, toByteOffset: entry, as: UInt8.self)
        raw.storeBytes(of: UInt8(descriptorCount), toByteOffset: entry + 1, as: UInt8.self)
        raw.storeBytes(of: UInt32(firstDescriptor).littleEndian, toByteOffset: entry + 4, as: UInt32.self)
        raw.storeBytes(of: identity.origin.littleEndian, toByteOffset: entry + 8, as: UInt64.self)
        raw.storeBytes(of: identity.number.littleEndian, toByteOffset: entry + 16, as: UInt64.self)
        if let vouch {
            raw.storeBytes(of: WireFormat.EntryFlags.vouched.rawValue.littleEndian, toByteOffset: entry + 2, as: UInt16.self)
            raw.storeBytes(of: vouch.device.littleEndian, toByteOffset: entry + 24, as: UInt32.self)
            raw.storeBytes(of: vouch.inode.littleEndian, toByteOffset: entry + 28, as: UInt32.self)
            return
        }
        raw.storeBytes(of: UInt32(nested.offset).littleEndian, toByteOffset: entry + 24, as: UInt32.self)
        raw.storeBytes(of: UInt32(nested.size).littleEndian, toByteOffset: entry + 28, as: UInt32.self)
    }

    /// Zeros from a static page, appended after reserving exact room: the
    /// specialised growth path (`Array(repeating:count:)` reaches the
    /// generic allocation, which looks the storage type up at run time,
    /// about 450 instructions more).
    private static func zeroedBuffer(count: Int) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(count)
        while buffer.count < count {
            let chunk = min(count - buffer.count, zeroPage.count)
            zeroPage.withUnsafeBytes { buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[0..<chunk])) }
        }
        return buffer
    }

    private static let zeroPage = [UInt8](repeating: 0, count: 1024)

    private mutating func encodeTransfer(_ transfer: ExportedTransfer, into writer: inout ByteWriter) throws(PortError) {
        writer.append(UInt32(transfer.queueLimit))
        writer.append(UInt32(transfer.connections.count))
        writer.append(UInt32(transfer.queued.count))
        writer.append(UInt32(transfer.requests.count))
        writer.append(transfer.sequenceNumber)
        writer.append(transfer.madeSendRights)
        for connection in transfer.connections {
            writer.append(connection.kind.rawValue)
            writer.append(UInt8(0)); writer.append(UInt8(0)); writer.append(UInt8(0))
            writer.append(UInt32(descriptors.count))
            descriptors.append(connection.socket)
        }
        for request in transfer.requests {
            let target = try export(request.target)
            writer.append(request.kind.rawValue)
            writer.append(UInt8(0)); writer.append(UInt8(0)); writer.append(UInt8(0))
            writer.append(UInt32(descriptors.count))
            writer.append(target.identity.origin)
            writer.append(target.identity.number)
            descriptors.append(contentsOf: target.descriptors)
        }
        for message in transfer.queued {
            let (head, tail) = try encode(message, nested: true)
            var patched = head
            patch(&patched, descriptorCount: 0)
            writer.append(UInt32(head.count + message.body.count + tail.count))
            // Who sent it, as this process's kernel said (a claim relayed to
            // us is not passed on as ours): the receiver shows it as our
            // claim, beside us as the sender (Docs/Security.md).
            let sender = message.trailer.sender
            writer.append(Int32(sender.pid))
            writer.append(UInt32(sender.uid))
            writer.append(UInt32(sender.gid))
            writer.append(UInt32(0))
            writer.append(contentsOf: patched)
            writer.append(contentsOf: message.body)
            writer.append(contentsOf: tail)
        }
    }

    /// Writes the descriptor count into an encoded header.
    package func patch(_ head: inout [UInt8], descriptorCount: Int) {
        WireHeader.setDescriptorCount(descriptorCount, in: &head)
    }
}
