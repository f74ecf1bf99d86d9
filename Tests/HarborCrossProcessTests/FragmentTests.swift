// Harbor — P08/P09: large payloads cross a connection in fragments, and
// fragment streams are hostile input like every other packet.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// The packet of a message carrying one copied region of `count` bytes
/// (flag continued), and the fragments that should follow it.
func fragmentedPacket(id: Int32, count: Int) throws -> (head: [UInt8], payload: [UInt8]) {
    let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    var content = MessageContent(id: id, body: [], trailer: MessageTrailer(sender: .current))
    content.regions.append(try payload.withUnsafeBytes { try MappedRegion(copying: $0) })
    var encoder = WireEncoder(export: PortCore.export)
    var (head, tail) = try encoder.encode(content)
    encoder.patch(&head, descriptorCount: 0)
    #expect(encoder.fragmentRegions.count == 1)
    return (head + tail, payload)
}

/// One fragment packet carrying `data`.
func fragment(_ data: ArraySlice<UInt8>) -> [UInt8] {
    var header = ByteWriter(capacity: WireFormat.headerSize)
    header.append(WireFormat.version)
    header.append(WireFormat.Kind.fragment.rawValue)
    header.append(UInt16(0))
    header.append(Int32(0))
    header.append(UInt32(data.count))
    header.append(UInt16(0))
    header.append(UInt16(0))
    header.append(UInt32(0))
    header.append(UInt32(WireFormat.headerSize + data.count))
    return header.bytes + Array(data)
}

@Suite(.serialized, .deadline(.seconds(120)))
struct FragmentTests {
    @Test func P08_aLargePayloadCrossesAProcessInFragments() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            // Not a multiple of the fragment size, several fragments long.
            let size = 3 * WireFormat.maximumFragmentData + 12_345
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
            defer { bytes.deallocate() }
            var expected: UInt32 = 0
            for index in 0..<size {
                bytes[index] = UInt8(truncatingIfNeeded: index &* 13)
                expected &+= UInt32(bytes[index])
            }
            let message = try Message(id: PeerCommand.region, payload: UnsafeRawBufferPointer(bytes))
            // A private copy: no descriptor, so it travels through the socket.
            let isPrivate = message.regions.first?.mapping.descriptor == nil
            #expect(isPrivate)
            let reply = try peer.request(message)
            #expect(reply.text == "\(size):\(expected)")
            peer.stop()
        }
    }

    @Test func P09_aFragmentedMessageIsReassembledInOrder() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (head, payload) = try fragmentedPacket(id: 21, count: 200_000)
            try raw.send(head)
            #expect(raw.nothingDelivered())  // not whole yet
            let cut = [0, 70_000, 140_000, payload.count]
            for index in 0..<3 {
                try raw.send(fragment(payload[cut[index]..<cut[index + 1]]))
            }
            let message = try raw.port.receive(timeout: .seconds(5))
            let (id, bytes, sender) = (message.id, message.regions.first?.bytes, message.trailer.sender)
            #expect(id == 21)
            #expect(bytes == payload)
            #expect(sender == ProcessIdentity.current)
        }
    }

    @Test func P09_aFragmentBelongingToNoMessageIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let refused = try raw.refusals(.badFragment) {
                try raw.send(fragment([1, 2, 3][...]))
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            // A fragment with a descriptor, or a bad length, is refused too.
            let pipeEnds = try makePipe()
            let mismatched = try raw.refusals(.descriptorMismatch) {
                try raw.send(fragment([1][...]), descriptors: [pipeEnds.0])
                #expect(raw.nothingDelivered())
            }
            #expect(mismatched == 1)
            var lying = fragment([1, 2, 3][...])
            lying[8] = 9  // declares 9 bytes, carries 3
            let badLength = try raw.refusals(.badLength) {
                try raw.send(lying)
                #expect(raw.nothingDelivered())
            }
            #expect(badLength == 1)
            close(pipeEnds.0)
            close(pipeEnds.1)
        }
    }

    @Test func P09_moreBytesThanDeclaredRefuseTheWholeMessage() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (head, payload) = try fragmentedPacket(id: 22, count: 1000)
            let refused = try raw.refusals(.badFragment) {
                try raw.send(head)
                try raw.send(fragment((payload + [0, 0])[...]))
                #expect(raw.nothingDelivered())
                // The message is gone: its next fragment belongs to nothing.
                try raw.send(fragment(payload[0..<10]))
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 2)
            // The connection still works.
            try raw.send(validPacket(id: 23))
            let id = try raw.port.receive(timeout: .seconds(5)).id
            #expect(id == 23)
        }
    }

    @Test func P09_aFragmentedHeaderThatLiesIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (head, _) = try fragmentedPacket(id: 24, count: 1000)
            // Continued flag cleared while a copied region is declared.
            var noFlag = head
            noFlag[2] &= ~UInt8(WireFormat.Flags.continued.rawValue)
            // A copied region larger than the format allows (length at entry offset 8).
            var huge = head
            let entry = WireFormat.headerSize
            for (offset, byte) in withUnsafeBytes(of: UInt64(WireFormat.maximumFragmentedPayload + 1).littleEndian,
                                                  Array.init).enumerated() {
                huge[entry + 8 + offset] = byte
            }
            // The continued flag on a message without copied regions.
            var flagOnly = validPacket(id: 25)
            flagOnly[2] |= UInt8(WireFormat.Flags.continued.rawValue)
            let refused = try raw.refusals(.badLength) {
                for packet in [noFlag, huge, flagOnly] {
                    try raw.send(packet)
                    #expect(raw.nothingDelivered())
                }
            }
            #expect(refused == 3)
        }
    }

    @Test func P09_anUnfinishedMessageIsReplacedByItsSendersNextOne() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (first, firstPayload) = try fragmentedPacket(id: 26, count: 5000)
            let (second, secondPayload) = try fragmentedPacket(id: 27, count: 3000)
            let replaced = try counting(.badFragment) { () throws -> (Int32, [UInt8]?) in
                try raw.send(first)
                try raw.send(fragment(firstPayload[0..<100]))
                try raw.send(second)  // the sender gave up on the first (say, a timeout)
                try raw.send(fragment(secondPayload[...]))
                let message = try raw.port.receive(timeout: .seconds(5))
                return (message.id, message.regions.first?.bytes)
            }
            #expect(replaced.refused == 1)
            let (id, bytes) = replaced.received
            #expect(id == 27)
            #expect(bytes == secondPayload)
            #expect(raw.nothingDelivered())
        }
    }

    @Test func P09_aHalfReceivedMessageFromADeadSenderIsDiscarded() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            do {
                let socket = try port.core.ensureTransport().makeConnection(.send)
                port.core.sendRightMade()  // as exporting a send right does
                let (head, payload) = try fragmentedPacket(id: 28, count: 4000)
                for packet in [head, fragment(payload[0..<10])] {
                    _ = try packet.withUnsafeBytes { try SeqPacketSocket.send(socket.rawValue, parts: [$0], descriptors: []) }
                }
                _ = socket  // closed here: the only sender hangs up mid-message
            }
            let nothing = switch port.tryReceive() {
            case .some: false
            case .none: true
            }
            #expect(nothing)
            let status = port.status
            #expect(status.queuedMessages == 0)
            #expect(status.sendRights == 0)  // the connection closed, taking its assembly
        }
    }
}

/// Runs `body`; returns its result and how many refusals for `reason` it caused.
private func counting<Result>(
    _ reason: WireRejectionReason, _ body: () throws -> Result
) rethrows -> (refused: Int, received: Result) {
    let before = WireRejections.count(reason)
    let result = try body()
    return (WireRejections.count(reason) - before, result)
}

private func makePipe() throws -> (CInt, CInt) {
    var ends: [CInt] = [-1, -1]
    guard pipe(&ends) == 0 else { throw PortError(.resourceShortage, "pipe") }
    return (ends[0], ends[1])
}
