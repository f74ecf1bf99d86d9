// Harbor — building a packet for another process: every packet Harbor sends.
//
// The mirror of InboundPacket.swift. A message leaves as one of three
// shapes (Docs/WireFormat.md): a plain message (header and body, built on
// the stack), an encoded message (Wire/WireEncoder.swift: entries, body,
// nested transfers and descriptors; one that carries a single send right
// and nothing else is written on the stack instead, the same bytes), or
// that encoded packet in a sealed memory file behind a header of its own;
// copied regions follow it as fragments. A sender waiting for a slot registers with a wait packet.
// Every header comes from `WireHeader`; `RemoteRoute` only sends.
import HarborSystem
import HarborPorts

package enum OutboundPacket {

    // MARK: Plain messages

    /// A message with nothing but an id and an inline body: no entries, no
    /// descriptors, no fragments. Most messages are; they skip the encoder.
    /// (A reply right already taken out carries nothing either.)
    static func isPlain(_ content: MessageContent) -> Bool {
        guard content.body.count <= Message.maximumBodySize else { return false }
        if content.isPlain { return true }
        return content.rights.isEmpty && content.regions.isEmpty && content.reply?.kind == .taken
            && content.files.isEmpty
    }

    /// A plain message's header, on the stack; its body is sent from the
    /// message's own storage (the same bytes `WireEncoder` would produce,
    /// without its arrays).
    static func plainHeader(_ content: MessageContent) -> WireHeader.Encoded {
        WireHeader(kind: .message, flags: content.countsAgainstLimit ? .countsAgainstLimit : [],
                   id: content.id, bodyLength: content.body.count).encoded
    }

    // MARK: One send right

    /// The send right of a message that carries it and nothing else (no
    /// other right, no reply right, no region, no file) and fits one packet
    /// with its entry: nil for any other message. A look-up's answer is
    /// such a message; it too skips the encoder (``soleSendRightHead(_:identity:vouch:)``).
    static func soleSendRight(_ content: MessageContent) -> SendRightToken? {
        guard content.body.count <= WireFormat.maximumInlinePacket - soleRightHeadSize,
              content.regions.isEmpty, content.files.isEmpty, content.reply == nil || content.reply?.kind == .taken
        else { return nil }
        let rights = content.rights
        guard rights.count == 1, case .send(let token) = rights[0] else { return nil }
        return token
    }

    /// The header and the one entry of a ``soleSendRight(_:)`` message, on
    /// the stack: the bytes `WireEncoder` writes for it, the right's two
    /// descriptors (connection, slot counter) being the packet's 0 and 1.
    /// Its body follows them, from the message's own storage.
    static func soleSendRightHead(
        _ content: MessageContent, identity: PortIdentity, vouch: SlotCounterVouch?
    ) -> SoleRightHead {
        var head = SoleRightHead()
        withUnsafeMutableBytes(of: &head.words) { raw in
            WireHeader(kind: .message, flags: content.countsAgainstLimit ? .countsAgainstLimit : [], id: content.id,
                       bodyLength: content.body.count, entryCount: 1, descriptorCount: 2).encode(into: raw)
            WireEncoder.writeEntry(into: raw, at: WireFormat.headerSize, kind: .send, descriptorCount: 2,
                                   firstDescriptor: 0, identity: identity, vouch: vouch)
        }
        return head
    }

    private static let soleRightHeadSize = WireFormat.headerSize + WireFormat.entrySize

    /// A header and one entry (56 bytes), zeroed until written.
    struct SoleRightHead {
        fileprivate var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)

        func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            var copy = words
            return Swift.withUnsafeBytes(of: &copy) { body($0) }
        }
    }

    // MARK: Encoded messages

    /// A message encoded for the wire: the bytes before and after its body,
    /// the descriptors its entries index, and the copied regions whose
    /// bytes follow in fragments.
    struct Encoded {
        /// Header (descriptor count set) and entries.
        var head: [UInt8]
        /// The nested section: moved receive rights' state.
        var tail: [UInt8]
        var descriptors: [SharedDescriptor]
        var fragmentRegions: [MappedRegion]
        /// Header, entries, body and nested section, in bytes.
        var count: Int
    }

    /// Encodes `content`, exporting its rights through `journal` (which can
    /// undo them should the send fail) or directly when nil.
    static func encode(_ content: MessageContent, journal: ExportJournal?) throws(PortError) -> Encoded {
        var encoder = if let journal {
            WireEncoder { (right) throws(PortError) in try journal.export(right) }
        } else {
            WireEncoder(export: PortCore.export)
        }
        var (head, tail) = try encoder.encode(content)
        let descriptors = encoder.descriptors
        WireHeader.setDescriptorCount(descriptors.count, in: &head)
        return Encoded(head: head, tail: tail, descriptors: descriptors, fragmentRegions: encoder.fragmentRegions,
                       count: head.count + content.body.count + tail.count)
    }

    /// Whether `packet` is too large for one packet on the socket, by bytes
    /// or by descriptors: it then travels in a memory file.
    static func needsMemoryFile(_ packet: Encoded) -> Bool {
        packet.count > WireFormat.maximumInlinePacket || packet.descriptors.count >= SeqPacketSocket.maximumDescriptors
    }

    // MARK: Memory-file packets

    /// `packet` (with `body`) written to a sealed memfd, and the header that
    /// goes on the socket with it: the memfd is descriptor 0, the packet's
    /// own descriptors follow (their indices inside count from 1).
    static func inMemoryFile(
        _ packet: Encoded, body: [UInt8]
    ) throws(PortError) -> (header: WireHeader.Encoded, file: SharedDescriptor) {
        guard packet.descriptors.count < SeqPacketSocket.maximumDescriptors else {
            throw PortError(.messageTooLarge, "\(packet.descriptors.count) descriptors is over the kernel's 253")
        }
        let file: SharedDescriptor
        do {
            file = try MemoryFile.create(name: "harbor-packet")
            try MemoryFile.writeAll(file.rawValue, [packet.head, body, packet.tail])
            try MemoryFile.addSeals(file.rawValue, MemoryFile.allSeals)
        } catch {
            throw PortError(error, "writing a large packet to a memory file")
        }
        // The inner packet's "counts" flag repeated outside: a receiver that
        // loses the memory file (MSG_CTRUNC) still knows to give its slot back.
        let inner = packet.head.withUnsafeBytes { WireHeader.claimsCountedMessage($0, byteCount: $0.count) }
        let header = WireHeader(kind: .message, flags: inner ? [.inMemoryFile, .countsAgainstLimit] : .inMemoryFile,
                                descriptorCount: packet.descriptors.count + 1)
        return (header.encoded, file)
    }

    // MARK: Fragments

    /// Calls `send` with each fragment of `regions`, in order: its header
    /// and at most `WireFormat.maximumFragmentData` bytes, straight from
    /// the regions.
    static func forEachFragment(
        of regions: [MappedRegion],
        _ send: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(PortError) -> Void
    ) throws(PortError) {
        for region in regions {
            let bytes = region.bytes
            var offset = 0
            while offset < bytes.count {
                let count = min(WireFormat.maximumFragmentData, bytes.count - offset)
                let header = WireHeader(kind: .fragment, bodyLength: count).encoded
                let result = header.withUnsafeBytes { headerBytes in
                    Result { () throws(PortError) in
                        try send(headerBytes, UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
                    }
                }
                try result.get()
                offset += count
            }
        }
        withExtendedLifetime(regions) {}
    }

    // MARK: Wait packets

    /// The header of a wait packet, which carries one eventfd and nothing else.
    static let waitHeader = WireHeader(kind: .wait, descriptorCount: 1).encoded
}
