// Harbor — P09: packets that once made the decoder trap (found by fuzzing,
// Docs/Fuzzing.md) are refused with a typed reason, and the receiver that
// got them stays up. Each packet is kept byte for byte as it was reported.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// The packet of issue 13: flags hasReply|continued, one entry, a copied
/// region (kind 6) of 1 byte, no descriptors (56 bytes). The parser took
/// the region out of the rights, then took the reply right from an empty
/// array (`removeLast()` trapped).
let replyFlagOnARegionOnly: [UInt8] = {
    var writer = ByteWriter()
    writer.append(WireFormat.version)
    writer.append(WireFormat.Kind.message.rawValue)
    writer.append(UInt16(2 | 8))  // hasReply | continued
    writer.append(Int32(0))       // id
    writer.append(UInt32(0))      // body length
    writer.append(UInt16(1))      // one entry
    writer.append(UInt16(0))      // no descriptors
    writer.append(UInt32(0))      // nested length
    writer.append(UInt32(56))     // total length
    writer.append(WireFormat.RightKind.copiedRegion.rawValue)
    writer.append(UInt8(0))       // descriptors it owns
    writer.append(UInt16(0))
    writer.append(UInt32(0))      // first descriptor
    writer.append(UInt64(1))      // the region's length (origin word)
    writer.append(UInt64(0))
    writer.append(UInt32(0))
    writer.append(UInt32(0))
    return writer.bytes
}()

/// Parses `bytes` (with `descriptors` arrived) and returns the refusal's reason; nil if accepted.
private func refusal(_ bytes: [UInt8], descriptors: Int = 0) -> WireRejectionReason? {
    bytes.withUnsafeBytes { raw in
        do throws(WireRejection) {
            _ = try WirePacket.parse(raw, descriptorCount: descriptors)
            return nil
        } catch {
            return error.reason
        }
    }
}

@Suite(.serialized, .deadline(.seconds(60)))
struct ParserTrapTests {
    @Test func P09_aReplyFlagOnAPacketOfRegionsOnlyIsRefusedNotATrap() {
        #expect(replyFlagOnARegionOnly.count == 56)
        #expect(refusal(replyFlagOnARegionOnly) == .badLength)
    }

    @Test func P09_thePacketThatCrashedAReceiverIsCountedAndTheReceiverServesOn() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let refused = try raw.refusals(.badLength) {
                try raw.send(replyFlagOnARegionOnly)
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            try raw.send(validPacket(id: 13))
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 13)
        }
    }

    @Test func P09_aReplyFlagWithRightsAndRegionsTakesTheReplyFromTheRights() {
        // The same packet with a taken entry first: the reply is that entry
        // (the last right once the regions are out), neither send nor send-once.
        var packet = replyFlagOnARegionOnly
        let taken: [UInt8] = [WireFormat.RightKind.taken.rawValue] + [UInt8](repeating: 0, count: 31)
        packet.insert(contentsOf: taken, at: WireFormat.headerSize)
        packet[12] = 2
        packet[20] = UInt8(packet.count)
        #expect(refusal(packet) == .unknownKind)
    }

    @Test func P09_descriptorIndicesAtTheTopOfTheirRangeAreRefusedNotATrap() {
        // A send right whose first descriptor index is 2^32 - 1: the range
        // [first, first + 2) is checked before it is formed.
        var writer = ByteWriter()
        writer.append(WireFormat.version)
        writer.append(WireFormat.Kind.message.rawValue)
        writer.append(UInt16(0))
        writer.append(Int32(0))
        writer.append(UInt32(0))
        writer.append(UInt16(1))
        writer.append(UInt16(2))
        writer.append(UInt32(0))
        writer.append(UInt32(56))
        writer.append(WireFormat.RightKind.send.rawValue)
        writer.append(UInt8(2))
        writer.append(UInt16(0))
        writer.append(UInt32.max)
        writer.append(UInt64(1))
        writer.append(UInt64(1))
        writer.append(UInt32(0))
        writer.append(UInt32(0))
        #expect(refusal(writer.bytes, descriptors: 2) == .descriptorMismatch)
    }

    @Test func P09_lengthsThatOverflowASumAreRefusedNotATrap() {
        // Body and nested lengths near 2^32: their sum with the header
        // fits a 64-bit Int but not a 32-bit one; either way it is refused.
        var packet = validPacket(id: 1, body: [])
        packet.replaceSubrange(8..<12, with: [0xFF, 0xFF, 0xFF, 0xFF])
        packet.replaceSubrange(16..<20, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(refusal(packet) == .badLength)
        packet.replaceSubrange(8..<12, with: [0, 0, 0, 0])
        packet.replaceSubrange(20..<24, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(refusal(packet) == .badLength)
    }
}

/// A packet moving the receive right of `port` (encoded by Harbor's own
/// encoder), with its transfer record's sequence number and make-send
/// count replaced; and the descriptors it carries.
private func movedPort(_ port: consuming ReceiveRight, sequenceNumber: UInt64?, made: UInt64?) throws
    -> (bytes: [UInt8], descriptors: [SharedDescriptor]) {
    var encoder = WireEncoder(export: PortCore.export)
    let content = MessageContent(id: 1, body: [], rights: [.receive(port.token)], trailer: MessageTrailer(sender: .current))
    var (head, tail) = try encoder.encode(content)
    encoder.patch(&head, descriptorCount: encoder.descriptors.count)
    // The transfer record: u32 limit, connections, queued, requests; u64 sequence number, make-send count.
    if let sequenceNumber { withUnsafeBytes(of: sequenceNumber.littleEndian) { tail.replaceSubrange(16..<24, with: $0) } }
    if let made { withUnsafeBytes(of: made.littleEndian) { tail.replaceSubrange(24..<32, with: $0) } }
    return (head + tail, encoder.descriptors)
}

@Suite(.serialized, .deadline(.seconds(60)))
struct TransferCounterTests {
    @Test func P09_aMovedPortWhoseSequenceNumberWouldOverflowIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (bytes, descriptors) = try movedPort(ReceiveRight(), sequenceNumber: .max, made: nil)
            let refused = try raw.refusals(.badLength) {
                try raw.send(bytes, descriptors: descriptors.map(\.rawValue))
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1, "the next message on that port would have trapped adding one to it")
        }
    }

    @Test func P09_aMovedPortWhoseMakeSendCountWouldOverflowIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (bytes, descriptors) = try movedPort(ReceiveRight(), sequenceNumber: nil, made: .max)
            let refused = try raw.refusals(.badLength) {
                try raw.send(bytes, descriptors: descriptors.map(\.rawValue))
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1, "the next send right made would have trapped adding one to it")
        }
    }

    @Test func P09_aMovedPortWithLargeButSafeCountersStillArrives() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (bytes, descriptors) = try movedPort(ReceiveRight(), sequenceNumber: 1 << 40, made: 1 << 40)
            try raw.send(bytes, descriptors: descriptors.map(\.rawValue))
            var message = try raw.port.receive(timeout: .seconds(5))
            let port = try message.takeReceiveRight(at: 0)
            try port.makeSendRight().send(Message(id: 2), timeout: .zero)
            #expect(try port.receive(timeout: .seconds(5)).trailer.sequenceNumber == (1 << 40) + 1)
        }
    }
}
