// Harbor — a message carrying one send right and nothing else skips the
// encoder (OutboundPacket.soleSendRight, RemoteRoute's one-send-right
// path): its header and entry, built on the stack, must be the bytes
// WireEncoder writes for the same message, with the same descriptors.
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

@Suite(.deadline(.seconds(60)))
struct SoleSendRightTests {
    @Test(arguments: [true, false])
    func theStackBuiltHeadIsTheEncodersBytes(countsAgainstLimit: Bool) throws {
        let port = ReceiveRight()
        let right = port.makeSendRight()
        let content = MessageContent(id: 0x4842_0001, body: Array("an answer".utf8), rights: [.send(right.token)],
                                     trailer: MessageTrailer(sender: .current), countsAgainstLimit: countsAgainstLimit)
        let token = try #require(OutboundPacket.soleSendRight(content))
        #expect(token === right.token)

        var encoder = WireEncoder(export: PortCore.export)
        var (head, tail) = try encoder.encode(content)
        encoder.patch(&head, descriptorCount: encoder.descriptors.count)
        #expect(tail.isEmpty)
        #expect(encoder.fragmentRegions.isEmpty)

        // Both paths send a connection, then the port's slot counter (a port
        // received here that shares no export makes a connection each time).
        let (_, slots, vouch) = try token.port.sendRightDescriptors()
        let stackBuilt = OutboundPacket.soleSendRightHead(content, identity: token.port.identity, vouch: vouch)
        #expect(stackBuilt.withUnsafeBytes { Array($0) } == head)
        #expect(encoder.descriptors.count == 2)
        #expect(encoder.descriptors.last?.rawValue == slots.rawValue)
        #expect(port.name == right.name)
    }

    @Test func everyOtherMessageGoesThroughTheEncoder() {
        let port = ReceiveRight()
        let right = port.makeSendRight()
        func content(body: [UInt8] = [], rights: [CarriedRight], reply: CarriedRight? = nil) -> MessageContent {
            MessageContent(id: 1, body: body, rights: rights, reply: reply, trailer: MessageTrailer(sender: .current))
        }
        #expect(OutboundPacket.soleSendRight(content(rights: [])) == nil)
        #expect(OutboundPacket.soleSendRight(content(rights: [.taken])) == nil)
        #expect(OutboundPacket.soleSendRight(content(rights: [.send(right.token), .send(right.token)])) == nil)
        #expect(OutboundPacket.soleSendRight(content(rights: [.send(right.token)], reply: .send(right.token))) == nil)
        // A taken reply right carries nothing: the path still applies.
        #expect(OutboundPacket.soleSendRight(content(rights: [.send(right.token)], reply: .taken)) != nil)
        // A body too large for one packet with the entry goes in a memory file.
        let large = [UInt8](repeating: 7, count: WireFormat.maximumInlinePacket)
        #expect(OutboundPacket.soleSendRight(content(body: large, rights: [.send(right.token)])) == nil)
        #expect(port.name == right.name)
    }
}
