// Harbor — P11: rights are capabilities. A packet that names a port by its
// identity, without the descriptors only that port's holders have, gets
// nothing: a forged receive right is refused and counted, a forged send
// right is a port of its own, and the port it names keeps its queue, limit
// and senders. The relayed claims of a moved port never become the sender.
import CHarborLinux
import Glibc
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// A packet carrying one right, exported as the test says (the identity
/// and descriptors of the test's choosing), written raw to `socket`.
func sendForged(_ right: ExportedRight, id: Int32 = 42, on socket: SharedDescriptor) throws {
    var encoder = WireEncoder(export: { _ throws(PortError) in right })
    let content = MessageContent(id: id, body: [], rights: [.taken], trailer: MessageTrailer(sender: .current))
    var (head, tail) = try encoder.encode(content)
    encoder.patch(&head, descriptorCount: encoder.descriptors.count)
    let bytes = head + tail
    let sent = try bytes.withUnsafeBytes { raw in
        try SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: encoder.descriptors.map(\.rawValue))
    }
    #expect(sent)
}

/// A receive right's transfer naming `identity`, made of fresh descriptors
/// nobody else holds: a slot counter, one connection, and one queued
/// message whose relayed sender claims to be root.
func forgedReceiveRight(claiming identity: PortIdentity, slots: SharedDescriptor? = nil) throws -> ExportedRight {
    let counter = try slots ?? SharedSlots(free: 0).descriptor
    let (receiving, _) = try SeqPacketSocket.makePair()
    var queued = MessageContent(id: 99, body: Array("as root".utf8), trailer: MessageTrailer(sender: .current))
    queued.trailer.sender = ProcessIdentity(pid: 1, uid: 0, gid: 0)
    let transfer = ExportedTransfer(queueLimit: 0, sequenceNumber: 7, madeSendRights: 1,
                                    connections: [(.send, receiving)], queued: [queued])
    return ExportedRight(kind: .receive, identity: identity, descriptors: [counter], transfer: transfer)
}

@Suite(.serialized, .deadline(.seconds(120)))
struct ForgeryTests {
    @Test func P11_aForgedReceiveRightForAPortReceivedHereIsRefusedAndThePortUntouched() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let victim = ReceiveRight()
            try victim.setQueueLimit(3)
            let sender = victim.makeSendRight()
            // The victim is known to other processes (it has exported a send
            // right, so its identity is in circulation) and has a message.
            _ = try victim.core.ensureTransport().makeConnection(.send)
            try sender.send(Message(id: 1, text: "mine"))
            let refused = try raw.refusals(.forgedRight) {
                try sendForged(forgedReceiveRight(claiming: victim.core.identity), on: raw.socket)
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            #expect(victim.queueLimit == 3)
            #expect(victim.status.queuedMessages == 1)
            #expect(try victim.receive(timeout: .zero).text == "mine")
            try sender.send(Message(id: 2, text: "still mine"), timeout: .zero)
            #expect(try victim.receive(timeout: .zero).text == "still mine")
        }
    }

    @Test func P11_aForgedReceiveRightCarryingTheRealSlotCounterIsRefusedToo() throws {
        // A send right's holder has the port's slot counter: that is not
        // the receive right, and must not pass for it.
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let victim = ReceiveRight()
            let slots = try victim.core.ensureTransport().slots.descriptor
            let refused = try raw.refusals(.forgedRight) {
                try sendForged(forgedReceiveRight(claiming: victim.core.identity, slots: slots), on: raw.socket)
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            try victim.makeSendRight().send(Message(id: 3, text: "alive"), timeout: .zero)
            #expect(try victim.receive(timeout: .zero).text == "alive")
        }
    }

    @Test func P11_aForgedSendRightNamingAKnownPortIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let victim = ReceiveRight()
            _ = try victim.core.ensureTransport()
            // Its own socket pair and its own slot counter, the victim's identity.
            let (sink, sending) = try SeqPacketSocket.makePair()
            let counter = try SharedSlots(free: 4)
            let forged = ExportedRight(kind: .send, identity: victim.core.identity,
                                       descriptors: [sending, counter.descriptor])
            let refused = try raw.refusals(.forgedRight) {
                try sendForged(forged, on: raw.socket)
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            #expect(victim.status.queuedMessages == 0)
            withExtendedLifetime(sink) {}
        }
    }

    @Test func P11_aLookAlikeSendRightNamingAnUnknownPortIsAPortOfItsOwn() throws {
        // Nothing here stands for the identity it names: it cannot be told
        // from a real right to a port this process has not met, so it is
        // one, reaching only what its socket reaches.
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let (sink, sending) = try SeqPacketSocket.makePair()
            let counter = try SharedSlots(free: 4)
            let right = ExportedRight(kind: .send, identity: PortIdentity(origin: 0xabcd, number: 9),
                                      descriptors: [sending, counter.descriptor])
            try sendForged(right, on: raw.socket)
            var carrier = try raw.port.receive(timeout: .seconds(5))
            let received = try carrier.takeSendRight(at: 0)
            try received.send(Message(id: 4, text: "to the sink"), timeout: .zero)
            var buffer = [UInt8](repeating: 0, count: 256)
            #expect(recv(sink.rawValue, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0)
        }
    }

    @Test func P11_aForgedSendOnceRightNamingAPortReceivedHereIsRefused() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let victim = ReceiveRight()
            _ = try victim.core.ensureTransport()
            let (sink, sending) = try SeqPacketSocket.makePair()
            let forged = ExportedRight(kind: .sendOnce, identity: victim.core.identity, descriptors: [sending])
            let refused = try raw.refusals(.forgedRight) {
                try sendForged(forged, on: raw.socket)
                #expect(raw.nothingDelivered())
            }
            #expect(refused == 1)
            withExtendedLifetime(sink) {}
        }
    }

    @Test func P11_aSendOnceRightThatComesHomeIsAccepted() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let home = ReceiveRight()
            let transport = try home.core.ensureTransport()
            let connection = try transport.makeConnection(.sendOnce)
            home.core.sendOnceMade()
            let right = ExportedRight(kind: .sendOnce, identity: home.core.identity, descriptors: [connection])
            try sendForged(right, on: raw.socket)
            var carrier = try raw.port.receive(timeout: .seconds(5))
            let once = try carrier.takeSendOnceRight(at: 0)
            try once.send(Message(id: 5, text: "home"))
            #expect(try home.receive(timeout: .seconds(5)).text == "home")
        }
    }

    @Test func P11_aSendRightThatComesHomeWithItsPortsCounterIsThatPort() throws {
        // The honest case the checks must keep: equality across processes.
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let home = ReceiveRight()
            let transport = try home.core.ensureTransport()
            let connection = try transport.makeConnection(.send)
            home.core.sendRightMade()
            let right = ExportedRight(kind: .send, identity: home.core.identity,
                                      descriptors: [connection, transport.slots.descriptor])
            try sendForged(right, on: raw.socket)
            var carrier = try raw.port.receive(timeout: .seconds(5))
            let received = try carrier.takeSendRight(at: 0)
            #expect(received == home.makeSendRight())
            // Equal by name, and the same port: what it sends is queued on home.
            try received.send(Message(id: 6, text: "back home"), timeout: .zero)
            #expect(try home.receive(timeout: .seconds(5)).text == "back home")
        }
    }

    @Test func P11_aMovedPortsQueuedMessagesNameTheirDelivererAsSender() throws {
        // A receive right for a port nobody here knows is a new port; what
        // its mover says about who queued its messages stays a claim.
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let fresh = PortIdentity(origin: 0xdead_beef, number: 1)
            try sendForged(forgedReceiveRight(claiming: fresh), on: raw.socket)
            var carrier = try raw.port.receive(timeout: .seconds(5))
            let moved = try carrier.takeReceiveRight(at: 0)
            let queued = try moved.receive(timeout: .zero)
            #expect(queued.text == "as root")
            #expect(queued.trailer.sender == ProcessIdentity.current, "the kernel's word: this process delivered it")
            #expect(queued.trailer.claimedOriginalSender?.uid == 0)
        }
    }

    @Test func P11_registryRecordsGoWithTheirPorts() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let before = PortRegistry.count
            for number in 0..<200 {
                let (_, sending) = try SeqPacketSocket.makePair()
                let counter = try SharedSlots(free: 1)
                let right = ExportedRight(kind: .send, identity: PortIdentity(origin: 0xfeed, number: UInt64(number)),
                                          descriptors: [sending, counter.descriptor])
                try sendForged(right, on: raw.socket)
                var carrier = try raw.port.receive(timeout: .seconds(5))
                _ = try carrier.takeSendRight(at: 0)
            }
            #expect(PortRegistry.count <= before + 1, "identities invented by a peer outlived their rights")
        }
    }
}

@Suite(.serialized, .deadline(.seconds(120)))
struct ProxyForgeryTests {
    @Test func P11_aForgedReceiveRightForAPortAnotherProcessSendsToIsRefusedThere() throws {
        // The peer holds a send right to `target` (a proxy). This process
        // also holds the port's slot counter, as every sender does, and
        // sends the peer a receive right claiming `target` with it: the
        // peer must not take its proxy for the port (its sends would stay
        // in its own process), because the claim lacks the other end of the
        // proxy's connection.
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let target = ReceiveRight()
            try target.setQueueLimit(5)
            var hold = Message(id: PeerCommand.hold)
            hold.attach(target.makeSendRight())
            try peer.port.send(hold)
            let slots = try target.core.ensureTransport().slots.descriptor
            guard let route = peer.port.token.port.remoteRoute else {
                Issue.record("the peer's port is not a proxy")
                return
            }
            try sendForged(forgedReceiveRight(claiming: target.core.identity, slots: slots),
                           id: PeerCommand.drain, on: route.socket)
            #expect(try peer.request(Message(id: PeerCommand.useHeld)).text == "done")
            let used = try target.receive(timeout: .seconds(10))
            #expect(used.text == "used by \(peer.pid)", "the peer's right still reaches the port")
            #expect(target.queueLimit == 5)
            peer.stop()
        }
    }
}
