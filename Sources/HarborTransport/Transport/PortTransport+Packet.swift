// Harbor — a port's transport, receiving: one packet off a connection.
//
// The pump (PortTransport+Pump.swift) calls `receive(on:token:buffers:)` for
// each ready connection, under the pump lock; this turns what `recvmsg`
// returns into a message, a waiter, part of a fragmented message, or nothing.
import HarborSystem
import HarborPorts

extension PortTransport {

    /// What one packet was.
    enum Received: ~Copyable {
        case nothing, closed
        /// Part of a fragmented message arrived; more may be waiting.
        case assembling
        /// Refused (counted in `WireRejections`); `gaveSlotBack` when a
        /// counted message's slot went back to the shared counter with it.
        case refused(gaveSlotBack: Bool)
        case message(MessageContent)
        case waiter(SharedDescriptor)

        var isAssembling: Bool {
            switch self {
            case .assembling: true
            default: false
            }
        }

        /// A message that holds a slot of the shared counter.
        var isCountedMessage: Bool {
            switch self {
            case .message(let content): content.countsAgainstLimit
            default: false
            }
        }
    }

    /// Receives one packet from `connection` (the pump lock held).
    func receive(on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers) -> Received {
        // While one message is being reassembled here, the next packet is most
        // likely its fragment: its data goes straight into the region.
        guard !buffers.assemblies.isEmpty, let list = buffers.assemblies[token], list.count == 1,
              let destination = list[0].nextDestination else {
            return receiveWithSpareBody(on: connection, token: token, buffers: &buffers)
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: destination.prefix(WireFormat.maximumFragmentData))
        var packet: ReceivedPacket
        do {
            guard let received = try SeqPacketSocket.receive(
                connection.fd, into: buffers.packet, scatter: (WireFormat.headerSize, target),
                control: buffers.control)
            else { return .nothing }
            packet = received
        } catch {
            return .closed  // ECONNRESET and the like: the peer is gone
        }
        if packet.isEndOfFile { return .closed }
        if packet.byteCount > WireFormat.headerSize {
            var isFragment = true
            let buffer = buffers.packet
            let received = buffers.assemblies.change(token, returningSlotsTo: counter) { list -> Received in
                let direct = Self.directFragment(packet, buffer, target, assemblies: &list)
                switch consume direct {
                case .progress:  // (one pattern per case, as above)
                    return .assembling
                case .refused:
                    return .refused(gaveSlotBack: false)  // the change gives the message's slot back
                case .complete(let content):
                    list = nil
                    return .message(content)
                case .other:
                    isFragment = false
                    return .nothing
                }
            }
            if isFragment { return received }
            Self.gather(&packet, into: buffers.packet, from: UnsafeRawBufferPointer(target))
        }
        return decodeBuffered(packet, connection: connection, token: token, buffers: &buffers)
    }

    /// Receives a packet while no fragmented message is in progress: the
    /// bytes after the header land in the pump's spare body, so a large plain
    /// message (half the spare or more) takes the spare as its body and its
    /// bytes are never copied after the kernel's copy. Every other packet is
    /// put back together in the packet buffer and decoded as usual.
    private func receiveWithSpareBody(on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers) -> Received {
        var spare = buffers.spareBody.take() ?? PumpBuffers.makeSpareBody()
        let packetBuffer = buffers.packet, control = buffers.control, fd = connection.fd
        // Plain values only until the packet is known to need more (no
        // optional struct with a reference in it, which costs outlined
        // copies and value-witness calls per packet).
        enum Attempt { case nothing, received(SeqPacketSocket.Receipt), failed }
        var attempt = Attempt.nothing
        spare.withUnsafeMutableBytes { target in
            do {
                if let receipt = try SeqPacketSocket.receiveRaw(
                    fd, into: packetBuffer, scatter: (WireFormat.headerSize, target), control: control) {
                    attempt = .received(receipt)
                }
            } catch {
                attempt = .failed  // ECONNRESET and the like: the peer is gone
            }
        }
        guard case .received(let receipt) = attempt else {
            buffers.spareBody = consume spare
            if case .failed = attempt { return .closed }
            return .nothing
        }
        // A plain message (most are) is decoded here, its body taken from
        // the spare: handed over whole when large, copied out when small.
        if !receipt.wasTruncated, let sender = SeqPacketSocket.credentialsAlone(receipt, control: control),
           let plain = InboundPacket.PlainHeader(UnsafeRawBufferPointer(packetBuffer), byteCount: receipt.byteCount) {
            if plain.bodyLength >= PumpBuffers.spareHandOver {
                spare.removeLast(spare.count - plain.bodyLength)
                return .message(plain.content(body: consume spare, sender: sender))
            }
            let length = plain.bodyLength
            let body = spare.withUnsafeBytes { [UInt8](UnsafeRawBufferPointer(start: $0.baseAddress, count: length)) }
            buffers.spareBody = consume spare
            return .message(plain.content(body: body, sender: sender))
        }
        // A send right and nothing else (a look-up's answer): read in
        // place, its two descriptors taken as they are.
        if !receipt.wasTruncated, let arrival = SeqPacketSocket.credentialsAndDescriptorPair(receipt, control: control),
           let sole = spare.withUnsafeBytes({ rest in
               InboundPacket.SoleSendRight(UnsafeRawBufferPointer(packetBuffer), rest: rest, byteCount: receipt.byteCount)
           }) {
            let socket = SharedDescriptor(taking: arrival.first), slots = SharedDescriptor(taking: arrival.second)
            let decoded = spare.withUnsafeBytes { rest in
                Result { () throws(WireRejection) in
                    try sole.content(rest: rest, sender: arrival.sender, socket: socket, slots: slots)
                }
            }
            buffers.spareBody = consume spare
            switch decoded {
            case .success(let content): return .message(content)
            case .failure(let error):
                return refuse(error, connection: connection, packet: packetBuffer, byteCount: receipt.byteCount)
            }
        }
        var packet = SeqPacketSocket.packet(receipt, control: control)
        if packet.isEndOfFile {
            buffers.spareBody = consume spare
            return .closed
        }
        if packet.byteCount > WireFormat.headerSize {
            spare.withUnsafeBytes { Self.gather(&packet, into: packetBuffer, from: $0) }
        }
        buffers.spareBody = consume spare
        return decodeBuffered(packet, connection: connection, token: token, buffers: &buffers)
    }

    /// Puts a packet received scattered (header in `buffer`, the next
    /// `target.count` bytes in `target`, the rest after the header in
    /// `buffer`) back together in `buffer`; one too long for `buffer` is
    /// marked truncated, so decoding refuses it.
    private static func gather(
        _ packet: inout ReceivedPacket, into buffer: UnsafeMutableRawBufferPointer, from target: UnsafeRawBufferPointer
    ) {
        guard packet.byteCount <= buffer.count else {
            packet.wasTruncated = true  // fits the scattered buffers, not the packet buffer
            return
        }
        let inTarget = min(target.count, packet.byteCount - WireFormat.headerSize)
        let after = packet.byteCount - WireFormat.headerSize - inTarget
        let base = buffer.baseAddress!
        if after > 0 {
            (base + WireFormat.headerSize + inTarget).copyMemory(from: base + WireFormat.headerSize, byteCount: after)
        }
        (base + WireFormat.headerSize).copyMemory(from: target.baseAddress!, byteCount: inTarget)
    }

    /// A packet refused: counted in `WireRejections`, and a counted
    /// message's slot given back. The header says whether its sender took
    /// a slot: a refused packet (descriptors cut short at the descriptor
    /// limit, a bad entry, anything) must not keep it, or the port fills
    /// for everyone. Only a send connection's messages count.
    private func refuse(
        _ error: WireRejection, connection: OpenConnection, packet: UnsafeMutableRawBufferPointer, byteCount: Int
    ) -> Received {
        WireRejections.record(error.reason)
        let counted = connection.kind == .send
            && WireHeader.claimsCountedMessage(UnsafeRawBufferPointer(packet), byteCount: byteCount)
        if counted { counter.release() }
        return .refused(gaveSlotBack: counted)
    }

    /// Decodes a packet whose bytes are all in the packet buffer.
    ///
    /// Every refusal gives back what the packet took (P12): its descriptors
    /// close with `packet`, and a counted message's slot goes back to the
    /// shared counter, here when the packet itself is refused, or through
    /// `Assemblies` when a fragmented message is.
    private func decodeBuffered(
        _ packet: ReceivedPacket, connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers
    ) -> Received {
        let decoded: InboundPacket
        do {
            decoded = try InboundPacket.decode(UnsafeRawBufferPointer(buffers.packet), packet)
        } catch {
            // `packet.descriptors` closes whatever came with it.
            return refuse(error, connection: connection, packet: buffers.packet, byteCount: packet.byteCount)
        }
        switch consume decoded {
        case .message(var content):
            recordSenderCgroup(of: packet, in: &content)
            return .message(content)
        case .wait(let eventfd):
            return .waiter(eventfd)
        case .started(var started):
            if connection.kind != .send || packet.senderProcess != nil {
                var content = started.content
                // A send-once connection's message never counts (the sender
                // took no slot for it), whatever its header says.
                if connection.kind != .send { content.countsAgainstLimit = false }
                recordSenderCgroup(of: packet, in: &content)
                started = FragmentAssembly(content: content, sender: started.sender)
            }
            return buffers.assemblies.change(
                token, arriving: started.content.countsAgainstLimit, returningSlotsTo: counter
            ) { list -> Received in
                var items = list ?? []
                defer { list = items }
                do throws(WireRejection) { try Self.start(started, in: &items) } catch {
                    WireRejections.record(error.reason)
                    return .refused(gaveSlotBack: false)  // the change gives the message's slot back
                }
                return .assembling
            }
        case .fragment(let range, let sender):
            let bytes = UnsafeRawBufferPointer(rebasing: buffers.packet[range])
            return buffers.assemblies.change(token, returningSlotsTo: counter) { list -> Received in
                var items = list ?? []
                defer { list = items }
                do throws(WireRejection) {
                    guard let content = try Self.add(bytes, from: sender, to: &items) else { return .assembling }
                    return .message(content)
                } catch {
                    WireRejections.record(error.reason)
                    return .refused(gaveSlotBack: false)
                }
            }
        }
    }
}
