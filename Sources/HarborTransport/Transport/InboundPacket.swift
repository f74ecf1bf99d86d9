// Harbor — turning a received packet into a message, rights and all.
//
// The packet is parsed completely (Wire/WirePacket.swift) before anything
// is created from it. Then each descriptor is claimed by the right that owns
// it; whatever is left unclaimed when decoding fails is closed by
// `ArrivedDescriptors`, so a rejected packet leaks nothing.
import HarborSystem
import HarborPorts

package enum InboundPacket: ~Copyable {
    case message(MessageContent)
    case wait(SharedDescriptor)
    /// The first packet of a fragmented message: its copied regions are
    /// allocated, their bytes follow in fragments from `sender`.
    case started(FragmentAssembly)
    /// A fragment's bytes (a range of the buffer) from `sender`.
    case fragment(Range<Int>, sender: ProcessIdentity)

    /// Decodes `packet`, whose bytes are at the front of `buffer`.
    package static func decode(
        _ buffer: UnsafeRawBufferPointer, _ packet: ReceivedPacket
    ) throws(WireRejection) -> InboundPacket {
        if packet.wasTruncated { throw WireRejection(.oversized, "packet longer than \(buffer.count) bytes") }
        if packet.controlWasTruncated { throw WireRejection(.controlTruncated, "descriptors were dropped") }
        guard let sender = packet.sender else { throw WireRejection(.missingCredentials, "no SCM_CREDENTIALS") }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<packet.byteCount])
        if packet.arrived == nil {
            // Unwrapped by moving: binding it with `if let` copied the message.
            var plain = decodePlain(bytes, sender: sender)
            if plain != nil { return .message(plain.take()!) }
        }
        let descriptors = packet.descriptors
        let header = try WireHeader.decode(bytes, validating: bytes.count)
        if header.kind == .fragment {
            return .fragment(try WirePacket.parseFragment(bytes, descriptorCount: descriptors.count), sender: sender)
        }
        if header.flags.contains(.inMemoryFile) {
            return try decodeFromMemoryFile(header, descriptors, sender: sender)
        }
        let parsed = try WirePacket.parse(bytes, descriptorCount: descriptors.count)
        if parsed.kind == .wait {
            guard let eventfd = descriptors.claim(0) else { throw WireRejection(.descriptorMismatch, "wait without eventfd") }
            // Ours to signal without ever blocking, whatever the sender passed.
            DescriptorIO.setNonBlocking(eventfd.rawValue)
            return .wait(eventfd)
        }
        return started(try materialize(parsed, bytes, descriptors, base: 0, sender: sender), parsed, sender)
    }

    /// A plain message (an id and a body, no entries, nested section or
    /// descriptors; the encoder's output for most messages), decoded with
    /// one allocation: its body. Nil for anything else, including anything
    /// malformed, which the full parser then examines and refuses as before.
    private static func decodePlain(_ bytes: UnsafeRawBufferPointer, sender: ProcessIdentity) -> MessageContent? {
        guard let plain = PlainHeader(bytes, byteCount: bytes.count) else { return nil }
        return plain.content(body: Array(UnsafeRawBufferPointer(rebasing: bytes[WireFormat.headerSize...])), sender: sender)
    }

    /// The header of a plain message, checked: version, kind, only the
    /// limit flag, no entries, descriptors or nested section, a body within
    /// the limit, and lengths that add up to the packet's `byteCount`. The
    /// body itself may lie elsewhere (the pump's spare body).
    package struct PlainHeader {
        package let id: Int32
        package let bodyLength: Int
        let countsAgainstLimit: Bool

        /// Reads the header at the front of `header`; nil unless the packet
        /// of `byteCount` bytes is a well-formed plain message.
        package init?(_ header: UnsafeRawBufferPointer, byteCount: Int) {
            guard let decoded = try? WireHeader.decode(header, validating: byteCount), decoded.isPlainMessage
            else { return nil }
            id = decoded.id
            bodyLength = decoded.bodyLength
            countsAgainstLimit = !decoded.flags.isEmpty
        }

        /// The message, with `body` (exactly `bodyLength` bytes) from `sender`.
        package func content(body: consuming [UInt8], sender: ProcessIdentity) -> MessageContent {
            MessageContent(id: id, body: body, trailer: MessageTrailer(sender: sender),
                           countsAgainstLimit: countsAgainstLimit)
        }
    }

    /// A message, or the start of one whose copied regions follow.
    private static func started(_ content: MessageContent, _ parsed: WirePacket, _ sender: ProcessIdentity) -> InboundPacket {
        guard parsed.flags.contains(.continued) else { return .message(content) }
        return .started(FragmentAssembly(content: content, sender: sender))
    }

    /// A packet too large for the socket: a header here, the packet in a
    /// sealed memfd (descriptor 0), its descriptors after that one.
    private static func decodeFromMemoryFile(
        _ header: WireHeader, _ descriptors: ArrivedDescriptors, sender: ProcessIdentity
    ) throws(WireRejection) -> InboundPacket {
        guard header.isMemoryFileWrapper else {
            throw WireRejection(.badLength, "memory-file packet header of \(header.totalLength) bytes")
        }
        let declared = header.descriptorCount
        guard declared == descriptors.count, declared >= 1 else {
            throw WireRejection(.descriptorMismatch, "declares \(declared) descriptors, \(descriptors.count) arrived")
        }
        guard let file = descriptors.claim(0) else { throw WireRejection(.descriptorMismatch, "no memory file") }
        let region: MappedRegion
        do { region = try MappedRegion(sealed: file, limit: WireFormat.maximumMemoryFilePacket) } catch {
            throw WireRejection(MappedRegion.isUnsealed(error) ? .unsealed : .badDescriptor, "memory-file packet: \(error)")
        }
        let bytes = region.bytes
        // The inner packet indexes descriptors after the memfd: shift by one.
        let parsed = try WirePacket.parse(bytes, descriptorCount: descriptors.count - 1)
        guard parsed.kind == .message else { throw WireRejection(.unknownKind, "wait packet in a memory file") }
        try parsed.checkMovedInlineBytes(from: UInt32(sender.uid))  // before any body is copied out (P12)
        return started(try materialize(parsed, bytes, descriptors, base: 1, sender: sender), parsed, sender)
    }

    private static func materialize(
        _ packet: WirePacket, _ bytes: UnsafeRawBufferPointer, _ descriptors: ArrivedDescriptors,
        base: Int, sender: ProcessIdentity
    ) throws(WireRejection) -> MessageContent {
        var rights: [CarriedRight] = []
        rights.reserveCapacity(packet.rights.count)
        for right in packet.rights {
            rights.append(try importRight(right, bytes, descriptors, base: base, sender: sender))
        }
        let reply = try packet.reply.map { right throws(WireRejection) in
            try importRight(right, bytes, descriptors, base: base, sender: sender)
        }
        // The sender is who the kernel says delivered the packet; a queued
        // message of a moved port was relayed by that process, which says
        // who sent it: believed only from a trusted name server (P11).
        let trailer = packet.relayedSender.map { MessageTrailer(relayedBy: sender, claiming: $0) }
            ?? MessageTrailer(sender: sender)
        var content = MessageContent(
            id: packet.id, body: Array(UnsafeRawBufferPointer(rebasing: bytes[packet.body])),
            rights: rights, reply: reply, trailer: trailer)
        for region in packet.regions {
            switch region {
            case .file(let index):
                guard let file = descriptors.claim(base + index) else {
                    throw WireRejection(.descriptorMismatch, "region descriptor \(index) missing")
                }
                // At most `PeerLimits.regionBytes`: a larger memfd is refused unmapped (P12).
                do { content.regions.append(try MappedRegion(sealed: file, limit: PeerLimits.regionBytes)) } catch {
                    throw WireRejection(MappedRegion.isUnsealed(error) ? .unsealed
                                        : MappedRegion.isTooLarge(error) ? .overLimit : .badDescriptor,
                                        "out-of-line region: \(error)")
                }
            case .copied(let count):
                // Address space only: pages are committed as fragments fill them.
                do { content.regions.append(try MappedRegion(privateCount: count)) } catch {
                    throw WireRejection(.badDescriptor, "no memory for a \(count)-byte region: \(error)")
                }
            }
        }
        // Carried files: taken as they are, whatever they are (Docs/Security.md,
        // "Carried files"); charged, like every descriptor, when queued.
        if !packet.files.isEmpty {
            var files: [CarriedFile?] = []
            files.reserveCapacity(packet.files.count)
            for index in packet.files {
                guard let file = descriptors.claim(base + index) else {
                    throw WireRejection(.descriptorMismatch, "file descriptor \(index) missing")
                }
                files.append(CarriedFile(file))
            }
            content.files = files
        }
        content.countsAgainstLimit = packet.flags.contains(.countsAgainstLimit)
        return content
    }

    private static func importRight(
        _ right: WireRight, _ bytes: UnsafeRawBufferPointer, _ descriptors: ArrivedDescriptors,
        base: Int, sender: ProcessIdentity
    ) throws(WireRejection) -> CarriedRight {
        func take(_ index: Int) throws(WireRejection) -> SharedDescriptor {
            guard let descriptor = descriptors.claim(base + index) else {
                throw WireRejection(.descriptorMismatch, "descriptor \(index) missing")
            }
            return descriptor
        }
        switch right.kind {
        case .taken, .memory, .copiedRegion, .file:
            return .taken
        case .send:
            let socket = try take(right.firstDescriptor)
            let slots = try take(right.firstDescriptor + 1)
            return .send(try PortCore.importSendRight(
                right.identity, socket: socket, slots: slots,
                vouched: SlotCounterVouch.believed(right.vouch, from: sender)))
        case .sendOnce:
            let socket = try take(right.firstDescriptor)
            return .sendOnce(try PortCore.importSendOnceRight(right.identity, socket: socket))
        case .receive:
            guard let transfer = right.transfer else { throw WireRejection(.badLength, "receive right without state") }
            let slots = try take(right.firstDescriptor)
            var connections: [(WireFormat.ConnectionKind, SharedDescriptor)] = []
            for connection in transfer.connections {
                connections.append((connection.kind, try take(connection.descriptor)))
            }
            var requests: [(WireFormat.RequestKind, SendOnceToken)] = []
            for request in transfer.requests {
                let socket = try take(request.descriptor)
                requests.append((request.kind, try PortCore.importSendOnceRight(request.identity, socket: socket)))
            }
            var queued: [MessageContent] = []
            for message in transfer.queued {
                queued.append(try materialize(message, bytes, descriptors, base: base, sender: sender))
            }
            return .receive(try PortCore.importReceiveRight(
                right.identity, slots: slots, connections: connections, requests: requests, queued: queued,
                limit: transfer.queueLimit, sequenceNumber: transfer.sequenceNumber, made: transfer.madeSendRights))
        }
    }
}
