// Harbor — P12: on a port with several connections, a receive that reads
// the busy connection again without asking the port's set (the pump's
// guess) does so a bounded number of times, so a connection that became
// readable meanwhile waits a bounded number of the busy one's messages.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

@Suite(.serialized, .deadline(.seconds(60)))
struct PumpFairnessTests {
    @Test func P12_aBusyConnectionDelaysAnotherByABoundedNumberOfMessages() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            try port.setQueueLimit(PortStateMachine.maximumQueueLimit)
            let transport = try port.core.ensureTransport()
            let busy = try transport.makeConnection(.send)
            let other = try transport.makeConnection(.send)
            func send(_ id: Int32, on socket: SharedDescriptor) throws {
                let sent = try validPacket(id: id).withUnsafeBytes { raw in
                    try SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: [])
                }
                #expect(sent)
            }
            // The set names the busy connection alone: the pumps that follow guess it.
            try send(0, on: busy)
            #expect(port.tryReceive()?.id == 0)
            let flood = 60
            for id in 1...Int32(flood) { try send(id, on: busy) }
            try send(-1, on: other)
            var order: [Int32] = []
            while let message = port.tryReceive() { order.append(message.id) }
            #expect(order.count == flood + 1)
            #expect(order.filter { $0 > 0 } == Array(1...Int32(flood)), "the busy connection's messages out of order")
            let position = try #require(order.firstIndex(of: -1))
            // At most 8 guesses of one message each; then the set names
            // both, and the busy one is served first, with its read-ahead.
            // (The flood is longer than that: unbounded guesses would read
            // it all first.)
            let bound = 8 + PumpBuffers.readAheadLimit + 1
            #expect(flood > bound)
            #expect(position <= bound, "the other connection waited \(position) messages (bound \(bound))")
        }
    }
}
