// Harbor — P09: packets from another process are hostile input. Each bad
// packet is refused with a counted, typed reason; the receiver stays up and
// every descriptor that came with a refused packet is closed.
import CHarborLinux
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// A port and the sending end of one connection to it, written to raw.
final class RawConnection {
    let port: ReceiveRight
    let socket: SharedDescriptor

    init() throws {
        port = ReceiveRight()
        socket = try port.core.ensureTransport().makeConnection(.send)
    }

    func send(_ bytes: [UInt8], descriptors: [CInt] = []) throws {
        let sent = try bytes.withUnsafeBytes { raw in
            try SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: descriptors)
        }
        #expect(sent)
    }

    /// Pumps the port; true if no message came out.
    func nothingDelivered() -> Bool {
        switch port.tryReceive() {
        case .some: false
        case .none: true
        }
    }

    /// Runs `body` and returns how many refusals for `reason` it caused.
    func refusals(_ reason: WireRejectionReason, _ body: () throws -> Void) rethrows -> Int {
        let before = WireRejections.count(reason)
        try body()
        return WireRejections.count(reason) - before
    }
}

/// A valid encoded message without rights: header, body, no descriptors.
func validPacket(id: Int32 = 7, body: [UInt8] = Array("hello".utf8)) -> [UInt8] {
    var encoder = WireEncoder(export: PortCore.export)
    let content = MessageContent(id: id, body: body, trailer: MessageTrailer(sender: .current))
    guard case (var head, let tail)? = try? encoder.encode(content) else { return [] }
    encoder.patch(&head, descriptorCount: 0)
    return head + body + tail
}

func withByte(_ packet: [UInt8], at offset: Int, _ value: UInt8) -> [UInt8] {
    var copy = packet
    copy[offset] = value
    return copy
}

@Suite(.serialized, .deadline(.seconds(120)))
struct WireHostilityTests {
    @Test func P09_aValidPacketIsAcceptedWithTheKernelsCredentials() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            try raw.send(validPacket())
            let message = try raw.port.receive(timeout: .seconds(5))
            #expect(message.id == 7)
            #expect(message.text == "hello")
            #expect(message.trailer.sender == ProcessIdentity.current)
        }
    }

    @Test func P09_truncatedPacketsAreRefusedAndCounted() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let packet = validPacket()
            let refused = try raw.refusals(.truncated) {
                try raw.send(Array(packet.prefix(10)))
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            let lying = try raw.refusals(.badLength) {
                try raw.send(Array(packet.dropLast(2)))   // total length says more
                #expect(raw.nothingDelivered())
                try raw.send(withByte(packet, at: 8, 200))  // body length lies
                #expect(raw.nothingDelivered())
            }
            #expect(lying == 2)
        }
    }

    @Test func P09_unknownVersionsKindsAndFlagsAreRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let packet = validPacket()
            let refused1 = try raw.refusals(.unknownVersion) {
                try raw.send(withByte(packet, at: 0, 2))
                #expect(raw.nothingDelivered())
            }
            #expect(refused1 == 1)
            let refused2 = try raw.refusals(.unknownKind) {
                try raw.send(withByte(packet, at: 1, 9))
                #expect(raw.nothingDelivered())
                try raw.send(withByte(packet, at: 3, 0x80))
                #expect(raw.nothingDelivered())
            }
            #expect(refused2 == 2)
        }
    }

    @Test func P09_tooManyOrTooFewDescriptorsAreRefusedAndEveryOneIsClosed() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let extra = try SharedDescriptor.makeEventDescriptor()
            let before = openDescriptorCount()
            let refused3 = try raw.refusals(.descriptorMismatch) {
                // Declares none, carries three.
                try raw.send(validPacket(), descriptors: [extra.rawValue, extra.rawValue, extra.rawValue])
                #expect(raw.nothingDelivered())
                // Declares two, carries one.
                var declared = validPacket()
                declared[14] = 2
                try raw.send(declared, descriptors: [extra.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refused3 == 2)
            #expect(openDescriptorCount() == before, "descriptors of refused packets are closed")
            // A send right whose "socket" is an eventfd: the right kind and count, the wrong thing.
            var sendRight = validPacket()
            sendRight = Array(sendRight.prefix(24)) + [UInt8](repeating: 0, count: 32) + Array(sendRight.dropFirst(24))
            sendRight[12] = 1           // one right
            sendRight[14] = 2           // two descriptors
            sendRight[20] = UInt8(sendRight.count)
            sendRight[24] = 1           // kind send
            sendRight[25] = 2           // two descriptors from index 0
            let refused4 = try raw.refusals(.badDescriptor) {
                try raw.send(sendRight, descriptors: [extra.rawValue, extra.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refused4 == 1)
            #expect(openDescriptorCount() == before)
        }
    }

    @Test func P09_truncatedControlDataIsRefusedAndItsDescriptorsClosed() throws {
        try expectNoDescriptorLeak {
            let extra = try SharedDescriptor.makeEventDescriptor()
            let duplicate = dup(extra.rawValue)
            let before = openDescriptorCount()
            let packet = ReceivedPacket(
                byteCount: 0, isEndOfFile: false, wasTruncated: false, controlWasTruncated: true,
                descriptors: ArrivedDescriptors([duplicate]), sender: .current)
            #expect(openDescriptorCount() == before)
            do {
                _ = try InboundPacket.decode(UnsafeRawBufferPointer(start: nil, count: 0), packet)
                Issue.record("MSG_CTRUNC must be refused")
            } catch {
                #expect((error as? WireRejection)?.reason == .controlTruncated)
            }
        }
        // The ArrivedDescriptors went out of scope above and closed `duplicate`.
    }

    @Test func P09_aFuzzedReceiverStaysUpAndLeaksNothing() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let pool = try (0..<3).map { _ in try SharedDescriptor.makeEventDescriptor() }
            let templates = [validPacket(), validPacket(id: 1, body: []), waitPacket()]
            var generator = SystemRandomNumberGenerator()
            let rejectedBefore = WireRejections.total
            var accepted = 0
            let count = 100_000
            for index in 0..<count {
                var packet: [UInt8]
                if index % 4 == 0 {
                    packet = (0..<Int.random(in: 1...96, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                } else {
                    packet = templates[index % templates.count]
                    for _ in 0..<Int.random(in: 1...4, using: &generator) {
                        switch Int.random(in: 0..<4, using: &generator) {
                        case 0: packet[Int.random(in: 0..<packet.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                        case 1: packet = Array(packet.prefix(Int.random(in: 1...packet.count, using: &generator)))
                        case 2: packet += (0..<Int.random(in: 1...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        default: packet[Int.random(in: 0..<min(24, packet.count), using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
                        }
                    }
                }
                let descriptors = (0..<Int.random(in: 0...2, using: &generator)).map { _ in pool.randomElement(using: &generator)!.rawValue }
                try raw.send(packet, descriptors: descriptors)
                while let message = raw.port.tryReceive() {
                    accepted += 1
                    _ = message
                }
            }
            let rejected = WireRejections.total - rejectedBefore
            #expect(rejected + accepted >= count * 9 / 10, "nearly every packet was refused or delivered, none lost silently")
            #expect(rejected > count / 2)
            // Still up: a good message still gets through.
            try raw.send(validPacket(id: 99))
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 99)
        }
    }
}

func waitPacket() -> [UInt8] {
    var writer = ByteWriter()
    writer.append(WireFormat.version)
    writer.append(WireFormat.Kind.wait.rawValue)
    writer.append(UInt16(0))
    writer.append(Int32(0))
    writer.append(UInt32(0))
    writer.append(UInt16(0))
    writer.append(UInt16(1))
    writer.append(UInt32(0))
    writer.append(UInt32(WireFormat.headerSize))
    return writer.bytes
}
