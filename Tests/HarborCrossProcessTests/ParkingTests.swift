// Harbor — P12: a counted message that finds the queue full is parked and its
// connection read no further (HarborPorts' Admission/ParkedMessages.swift). It
// joins the queue, in order, as slots free; it travels behind the queue when
// the receive right moves; it goes with the queue when the port dies, and
// nothing is left open. Senders here take no slots (raw packets), as a
// sender that believed room written into the counter would not have needed to.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// A counted message whose body is its id as text.
private func counted(_ id: Int) -> [UInt8] { validPacket(id: Int32(id), body: Array("\(id)".utf8)) }

private func sendRaw(_ socket: SharedDescriptor, _ packet: [UInt8]) throws {
    let sent = try packet.withUnsafeBytes { try SeqPacketSocket.send(socket.rawValue, parts: [$0], descriptors: []) }
    #expect(sent)
}

@Suite(.serialized, .deadline(.seconds(120)))
struct ParkingTests {
    /// Ten counted messages at a limit of 2: the queue holds 2, one is
    /// parked and the connection is read no further (pumping reads nothing
    /// more: the other seven wait in its socket); receiving gives 0...9 in
    /// order, and nothing is left parked.
    @Test func P12_aPausedConnectionIsReadAgainInOrderAsSlotsFree() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            try port.setQueueLimit(2)
            let transport = try port.core.ensureTransport()
            let socket = try transport.makeConnection(.send)
            for id in 0..<10 { try sendRaw(socket, counted(id)) }
            for _ in 0..<20 { transport.pump(into: port.core) }
            #expect(port.status.queuedMessages == 2, "the queue holds its limit")
            #expect(transport.slots.counter.parked == 1, "one parked, the connection read no further")
            var ids: [Int32] = []
            while let message = port.tryReceive() { ids.append(message.id) }
            #expect(ids == Array(0..<10), "all of them, in order")
            #expect(transport.slots.counter.parked == 0)
            withExtendedLifetime(socket) {}
        }
    }

    /// The port dies while a message is parked and its connection paused:
    /// the parked message goes with the queue, the sender sees the hang-up,
    /// and nothing is left open.
    @Test func P12_aPortThatDiesDropsItsParkedMessages() throws {
        try expectNoDescriptorLeak {
            var socket: SharedDescriptor?
            do {
                let port = ReceiveRight()
                try port.setQueueLimit(1)
                let transport = try port.core.ensureTransport()
                let made = try transport.makeConnection(.send)
                for id in 0..<5 { try sendRaw(made, counted(id)) }
                for _ in 0..<5 { transport.pump(into: port.core) }
                #expect(transport.slots.counter.parked == 1)
                socket = made
            }
            var probe = pollfd(fd: socket?.rawValue ?? -1, events: Int16(POLLOUT), revents: 0)
            _ = poll(&probe, 1, 1000)
            #expect(probe.revents & Int16(POLLHUP) != 0, "the sender sees its receiver gone")
        }
    }

    /// The receive right moves to another process while a message is
    /// parked: it travels behind the queue, the paused connection with it,
    /// and the new holder receives all eight messages, in order.
    @Test func P12_parkedMessagesTravelWithTheirReceiveRight() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let moving = ReceiveRight()
            try moving.setQueueLimit(2)
            let transport = try moving.core.ensureTransport()
            let socket = try transport.makeConnection(.send)
            for id in 0..<8 { try sendRaw(socket, counted(id)) }
            for _ in 0..<10 { transport.pump(into: moving.core) }
            #expect(moving.status.queuedMessages == 2)
            #expect(transport.slots.counter.parked == 1)
            var drain = Message(id: PeerCommand.drainTrailers)
            drain.attach(moving)
            let reply = try peer.request(drain)
            // text@sender@claim, one per message the new holder received.
            let texts = reply.text.split(separator: ",").map { String($0.split(separator: "@").first ?? "") }
            #expect(texts == (0..<8).map { "\($0)" }, "all of them, in order: \(reply.text)")
            #expect(transport.slots.counter.parked == 0, "nothing left parked here")
            withExtendedLifetime(socket) {}
            peer.stop()
        }
    }

    /// One admission whose first message parks (a counted message at a
    /// limit of 0) and whose batch holds later, uncounted messages of the
    /// same connection: they park behind it, and all come out in the order
    /// the connection sent them once there is room. (Found by the
    /// `admission` fuzz target: the batch was queued ahead of the parked
    /// message.)
    @Test func P12_aConnectionsLaterMessagesStayBehindOneItParkedInTheSameAdmission() throws {
        let port = ReceiveRight()
        try port.setQueueLimit(0)
        let transport = try port.core.ensureTransport()
        var arrivals = PortArrivals()
        arrivals.append(message: MessageContent(id: 0, body: []), from: 1, reserving: 2)
        for id in 1...2 {
            var content = MessageContent(id: Int32(id), body: [])
            content.countsAgainstLimit = false
            arrivals.append(message: content, from: 1, reserving: 2)
        }
        let refused = port.core.admit(arrivals, from: transport).refusals.count
        #expect(refused == 0)
        #expect(port.status.queuedMessages == 0, "nothing of the connection overtakes what it parked")
        try port.setQueueLimit(4)
        var ids: [Int32] = []
        while let message = try? port.receive(timeout: .zero) { ids.append(message.id) }
        #expect(ids == [0, 1, 2])
    }
}
