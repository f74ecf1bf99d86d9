// Harbor — a packet carrying one send right and nothing else (a look-up's
// answer) is read in place on arrival (InboundPacket.SoleSendRight,
// SeqPacketSocket.credentialsAndDescriptorPair): exactly that shape, the
// same message the full parser makes; anything else goes to the parser,
// which examines and refuses it as before, and no descriptor leaks either way.
import CHarborLinux
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// The bytes `RemoteRoute` sends for a message carrying `right` alone.
private func solePacket(_ content: MessageContent, identity: PortIdentity, vouch: SlotCounterVouch? = nil) -> [UInt8] {
    OutboundPacket.soleSendRightHead(content, identity: identity, vouch: vouch).withUnsafeBytes { Array($0) }
        + content.body
}

/// `SoleSendRight`'s reading of `packet`, split as the pump receives it.
private func readSole(_ packet: [UInt8], byteCount: Int? = nil) -> InboundPacket.SoleSendRight? {
    packet.withUnsafeBytes { bytes in
        InboundPacket.SoleSendRight(UnsafeRawBufferPointer(rebasing: bytes[..<WireFormat.headerSize]),
                                    rest: UnsafeRawBufferPointer(rebasing: bytes[WireFormat.headerSize...]),
                                    byteCount: byteCount ?? bytes.count)
    }
}

@Suite(.serialized, .deadline(.seconds(120)))
struct InboundSoleSendRightTests {
    private let identity = PortIdentity(origin: 0x1234, number: 56)

    private func content(body: String = "an answer", counted: Bool = true) -> MessageContent {
        MessageContent(id: 0x4842_0001, body: Array(body.utf8), rights: [.taken],
                       trailer: MessageTrailer(sender: .current), countsAgainstLimit: counted)
    }

    @Test(arguments: [true, false])
    func theShapeIsReadAsTheParserReadsIt(counted: Bool) throws {
        let packet = solePacket(content(counted: counted), identity: identity)
        let sole = try #require(readSole(packet))
        let parsed = try packet.withUnsafeBytes { try WirePacket.parse($0, descriptorCount: 2) }
        #expect(sole.id == parsed.id)
        #expect(sole.identity == parsed.rights.first?.identity)
        #expect(sole.bodyLength == parsed.body.count)
        #expect(sole.countsAgainstLimit == parsed.flags.contains(.countsAgainstLimit))
        #expect(parsed.rights.count == 1 && parsed.reply == nil && parsed.regions.isEmpty && parsed.files.isEmpty)
        #expect(readSole(solePacket(content(body: ""), identity: identity))?.bodyLength == 0)
        #expect(sole.vouch == nil)
    }

    @Test func aVouchedRightIsReadInPlaceWithItsVouch() throws {
        let vouch = SlotCounterVouch(device: 0x2d, inode: 0x1_0203)
        let packet = solePacket(content(), identity: identity, vouch: vouch)
        let sole = try #require(readSole(packet))
        let parsed = try packet.withUnsafeBytes { try WirePacket.parse($0, descriptorCount: 2) }
        #expect(sole.vouch == vouch)
        #expect(parsed.rights.first?.vouch == vouch)
        #expect(sole.identity == parsed.rights.first?.identity)
        // Any other entry flag: the parser's to refuse.
        #expect(readSole(withByte(packet, at: WireFormat.headerSize + 2, 2)) == nil)
        #expect(readSole(withByte(packet, at: WireFormat.headerSize + 2, 3)) == nil)
    }

    @Test func everyOtherShapeGoesToTheParser() {
        let packet = solePacket(content(), identity: identity)
        let entry = WireFormat.headerSize
        #expect(readSole(withByte(packet, at: 0, 2)) == nil)  // version
        #expect(readSole(withByte(packet, at: 1, WireFormat.Kind.wait.rawValue)) == nil)
        #expect(readSole(withByte(packet, at: 2, UInt8(WireFormat.Flags.hasReply.rawValue))) == nil)
        #expect(readSole(withByte(packet, at: 2, UInt8(WireFormat.Flags.transfers.rawValue))) == nil)
        #expect(readSole(withByte(packet, at: 8, 2)) == nil)  // two entries
        #expect(readSole(withByte(packet, at: 10, 3)) == nil)  // three descriptors
        #expect(readSole(withByte(packet, at: entry, WireFormat.RightKind.sendOnce.rawValue)) == nil)
        #expect(readSole(withByte(packet, at: entry + 1, 1)) == nil)  // one descriptor for a send right
        #expect(readSole(withByte(packet, at: entry + 4, 1)) == nil)  // first descriptor 1
        #expect(readSole(withByte(packet, at: entry + 24, 1)) == nil)  // a nested offset
        #expect(readSole(withByte(packet, at: entry + 28, 1)) == nil)  // a nested size
        #expect(readSole(packet, byteCount: packet.count - 1) == nil)  // lengths disagree
        #expect(readSole(Array(packet.dropLast())) == nil)
        // The rest not all in the spare: the parser, after gathering.
        #expect(packet.withUnsafeBytes { bytes in
            InboundPacket.SoleSendRight(UnsafeRawBufferPointer(rebasing: bytes[..<WireFormat.headerSize]),
                                        rest: UnsafeRawBufferPointer(rebasing: bytes[WireFormat.headerSize..<(bytes.count - 1)]),
                                        byteCount: bytes.count)
        } == nil)
    }

    @Test(arguments: [(0, true), (1, true), (2, true), (3, true), (2, false)])
    func onlyCredentialsAndTwoDescriptorsAreReadInPlace(descriptorCount: Int, credentials: Bool) throws {
        try expectNoDescriptorLeak {
            let (receiving, sending) = try SeqPacketSocket.makePair()
            if credentials { try SeqPacketSocket.passCredentials(receiving.rawValue) }
            let files = try (0..<descriptorCount).map { _ in try SeqPacketSocket.makePair().0 }
            let bytes: [UInt8] = [1, 2, 3]
            let sent = try bytes.withUnsafeBytes { raw in
                try SeqPacketSocket.send(sending.rawValue, parts: [raw], descriptors: files.map(\.rawValue))
            }
            #expect(sent)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 16)
            let control = UnsafeMutableRawBufferPointer.allocate(byteCount: SeqPacketSocket.controlCapacity, alignment: 16)
            defer { buffer.deallocate(); control.deallocate() }
            let receipt = try #require(try SeqPacketSocket.receiveRaw(receiving.rawValue, into: buffer, scatter: nil,
                                                                       control: control))
            let pair = SeqPacketSocket.credentialsAndDescriptorPair(receipt, control: control)
            if descriptorCount == 2 && credentials {
                let read = try #require(pair)
                #expect(read.sender == ProcessIdentity.current)
                // Read, not taken: what the full reading finds, which takes them.
                let packet = SeqPacketSocket.packet(receipt, control: control)
                #expect(packet.descriptors.peek(0) == read.first)
                #expect(packet.descriptors.peek(1) == read.second)
            } else {
                #expect(pair == nil)
                _ = SeqPacketSocket.packet(receipt, control: control)  // takes (and closes) what came
            }
        }
    }

    /// Sends `raw` a right to a port of this process, as its holder would
    /// (a connection and the port's counter), in `packet(identity)`'s bytes.
    private func sendHomeRight(to raw: RawConnection, _ packet: (PortIdentity) -> [UInt8]) throws -> ReceiveRight {
        let home = ReceiveRight()
        let transport = try home.core.ensureTransport()
        let connection = try transport.makeConnection(.send)
        home.core.sendRightMade()
        try raw.send(packet(home.core.identity), descriptors: [connection.rawValue, transport.slots.descriptor.rawValue])
        return home
    }

    @Test func aSoleSendRightArrivesAsTheParserWouldDeliverIt() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let home = try sendHomeRight(to: raw) { solePacket(content(counted: false), identity: $0) }
            var carrier = try raw.port.receive(timeout: .seconds(5))
            #expect(carrier.id == 0x4842_0001)
            #expect(carrier.text == "an answer")
            #expect(carrier.trailer.sender == ProcessIdentity.current)
            let received = try carrier.takeSendRight(at: 0)
            #expect(received == home.makeSendRight())
            let hasReply = carrier.hasReplyRight
            #expect(!hasReply)
        }
    }

    @Test func theSameBytesWithAReplyFlagTakeTheParserAndCarryAReplyRight() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let home = try sendHomeRight(to: raw) {
                withByte(solePacket(content(counted: false), identity: $0), at: 2, UInt8(WireFormat.Flags.hasReply.rawValue))
            }
            let carrier = try raw.port.receive(timeout: .seconds(5))
            #expect(carrier.text == "an answer")
            let hasReply = carrier.hasReplyRight
            #expect(hasReply)
            withExtendedLifetime(home) {}
        }
    }

    @Test func aSoleSendRightWhoseCounterIsNoCounterIsRefusedAndClosed() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (sink, sending) = try SeqPacketSocket.makePair()
            let (notACounter, _) = try SeqPacketSocket.makePair()
            let packet = solePacket(content(counted: false), identity: identity)
            let refused = try raw.refusals(.badDescriptor) {
                try raw.send(packet, descriptors: [sending.rawValue, notACounter.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            withExtendedLifetime(sink) {}
        }
    }

    @Test func aThirdDescriptorTakesTheParserWhichRefusesIt() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (sink, sending) = try SeqPacketSocket.makePair()
            let counter = try SharedSlots(free: 4)
            let (extra, _) = try SeqPacketSocket.makePair()
            let packet = solePacket(content(counted: false), identity: identity)
            let refused = try raw.refusals(.descriptorMismatch) {
                try raw.send(packet, descriptors: [sending.rawValue, counter.descriptor.rawValue, extra.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            withExtendedLifetime(sink) {}
        }
    }
}
