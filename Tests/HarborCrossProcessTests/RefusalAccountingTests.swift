// Harbor — P12: every refusal gives back what it took. A sender takes a
// slot of the port's shared counter for each counted message; a message
// the receiver refuses (a bad packet, descriptors cut short at the
// descriptor limit, a flood, a refused fragmented message, a port that died
// meanwhile) must give it back exactly once, or the port fills for every
// sender. Each test compares the free slots before and after.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

// Fragmented packets are built by FragmentTests.swift's `fragmentedPacket` and `fragment`.

/// A sender that plays by the rules: a slot first, then the packet.
private func sendCounted(_ raw: RawConnection, _ slots: SharedSlots, _ packet: [UInt8], descriptors: [CInt] = []) throws {
    #expect(slots.tryAcquire(), "a slot is free for an honest sender")
    try raw.send(packet, descriptors: descriptors)
}

/// Receives whatever is queued; how many messages that was.
private func drain(_ port: borrowing ReceiveRight) -> Int {
    var count = 0
    while let message = port.tryReceive() {
        _ = message
        count += 1
    }
    return count
}

@Suite(.serialized, .deadline(.seconds(120)))
struct RefusalAccountingTests {
    @Test func P12_aRefusedPacketGivesItsSlotBack() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let slots = try raw.port.core.ensureTransport().slots
            let before = slots.free
            let extra = try SharedDescriptor.makeEventDescriptor()
            var twoDeclared = validPacket()
            twoDeclared[14] = 2
            let refusals = try raw.refusals(.unknownKind) {
                try sendCounted(raw, slots, withByte(validPacket(), at: 3, 0x80))  // an unknown flag
                #expect(raw.nothingDelivered())
            } + raw.refusals(.descriptorMismatch) {
                try sendCounted(raw, slots, twoDeclared, descriptors: [extra.rawValue])
                #expect(raw.nothingDelivered())
            }
            #expect(refusals == 2)
            #expect(slots.free == before, "each refused counted packet gave its slot back")
            // Honest messages go on as before, up to the limit and back.
            for index in 0..<Int(before) { try sendCounted(raw, slots, validPacket(id: Int32(index))) }
            #expect(drain(raw.port) == Int(before))
            #expect(slots.free == before)
        }
    }

    @Test func P12_refusedFragmentedMessagesGiveTheirSlotsBack() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let slots = try raw.port.core.ensureTransport().slots
            let before = slots.free
            // More bytes than declared: the whole message is refused.
            let (head, payload) = try fragmentedPacket(id: 30, count: 1000)
            try sendCounted(raw, slots, head)
            try raw.send(fragment((payload + [0, 0])[...]))
            #expect(raw.nothingDelivered())
            #expect(slots.free == before, "a refused fragment gives its message's slot back")
            // An unfinished message replaced by its sender's next one.
            let (first, firstPayload) = try fragmentedPacket(id: 31, count: 5000)
            let (second, secondPayload) = try fragmentedPacket(id: 32, count: 3000)
            try sendCounted(raw, slots, first)
            try raw.send(fragment(firstPayload[0..<100]))
            try sendCounted(raw, slots, second)
            try raw.send(fragment(secondPayload[...]))
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 32)
            #expect(slots.free == before, "the replaced message gave its slot back, the whole one was received")
        }
    }

    @Test func P12_aHalfReceivedMessageOfAClosedConnectionGivesItsSlotBack() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            let transport = try port.core.ensureTransport()
            let before = transport.slots.free
            do {
                let socket = try transport.makeConnection(.send)
                port.core.sendRightMade()  // as exporting a send right does
                let (head, payload) = try fragmentedPacket(id: 33, count: 4000)
                #expect(transport.slots.tryAcquire())
                for packet in [head, fragment(payload[0..<10])] {
                    _ = try packet.withUnsafeBytes { try SeqPacketSocket.send(socket.rawValue, parts: [$0], descriptors: []) }
                }
                _ = socket  // closed here: the only sender hangs up mid-message
            }
            #expect(drain(port) == 0)
            #expect(port.status.sendRights == 0)
            #expect(transport.slots.free == before)
        }
    }

    @Test func P12_aFloodParksAndLeavesTheCounterWithRoom() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let transport = try raw.port.core.ensureTransport()
            let before = transport.slots.free
            // A sender that takes no slots and sends far past the limit.
            let total = PortStateMachine.maximumQueueLimit + Int(before) + 300
            let refusedBefore = WireRejections.total
            var sent = 0
            while sent < total {
                let batch = min(200, total - sent)
                for _ in 0..<batch {
                    try raw.send(validPacket(id: Int32(sent)))
                    sent += 1
                }
                // Queued, not received: a pump reads one packet per connection.
                for _ in 0..<batch { transport.pump(into: raw.port.core) }
            }
            // Past the limit its messages park and its connection is read no
            // further (HarborPorts' Admission/ParkedMessages.swift): the rest waits
            // in its socket, and nothing is refused.
            #expect(raw.port.status.queuedMessages <= Int(before), "the queue stayed within its limit")
            #expect(WireRejections.total == refusedBefore, "nothing refused")
            let received = drain(raw.port)
            #expect(received == total, "every message arrived, as slots freed")
            #expect(transport.slots.counter.parked == 0)
            // A sender that takes no slots gives back, as its messages are
            // received, slots it never took: the counter may then show a
            // little more room than there is (a hint: the next message past
            // the limit parks and lowers it), never less.
            #expect(transport.slots.free >= before, "the counter shows the port's room again")
        }
    }

    @Test func P12_aMessageForAPortThatDiedMeanwhileGivesItsSlotBack() throws {
        let port = ReceiveRight()
        let core = port.core
        let transport = try core.ensureTransport()
        let before = transport.slots.free
        #expect(transport.slots.tryAcquire())  // a sender's message, in flight
        port.destroy()
        // The pump read it before the port died, and hands it over after.
        var arrivals = PortArrivals()
        arrivals.append(message: MessageContent(id: 1, body: []), from: 0, reserving: 1)
        let gaveBack = core.admit(arrivals, from: transport).gaveSlotsBack
        #expect(gaveBack)
        #expect(transport.slots.free == before)
    }

    /// At its descriptor limit a receiver's kernel cuts the descriptors of
    /// arriving packets short (MSG_CTRUNC): those requests are refused. Each
    /// gives its slot back, so once descriptors are free again honest
    /// requests get through (harbord was full for everyone after 256).
    @Test func P12_requestsRefusedAtTheDescriptorLimitGiveTheirSlotsBack() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            guard let slots = peer.port.token.port.state.withLock({ $0.route?.slots }) else {
                Issue.record("a send right to another process has the port's slot counter")
                return
            }
            let limit = slots.free
            #expect(try peer.request(Message(id: PeerCommand.limitFiles, text: "1")).text.hasPrefix("limit="))
            // Each message carries 6 send rights (12 descriptors): more than
            // the peer may open, so each is cut short and refused. Four
            // times the queue limit: without the slots given back, the
            // fifth would wait for ever.
            let target = ReceiveRight()
            let right = target.makeSendRight()
            for index in 0..<(4 * Int(limit)) {
                var message = Message(id: 1000 + Int32(index))
                for _ in 0..<6 { message.attach(right) }  // a connection each
                try peer.port.send(message, timeout: .seconds(10))
            }
            let truncated = try peer.request(Message(id: PeerCommand.truncations)).text
            #expect(truncated == "\(4 * Int(limit))", "each was cut short and refused")
            #expect(slots.free == limit, "every refused request gave its slot back")
            // Honest requests (one descriptor each: the reply right) still get through.
            for index in 0..<(2 * Int(limit)) {
                #expect(try peer.request(Message(id: PeerCommand.echo, text: "\(index)")).text == "\(index)")
            }
            peer.stop()
        }
    }
}
