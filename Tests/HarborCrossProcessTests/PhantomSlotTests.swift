// Harbor — P12: no phantom slot. After senders waited on a full port, the
// shared slot counter must not show a slot taken that no message holds
// (the receiver's own sends were refused for it, "at its queue limit",
// while the queue had room), and the receiver's own sends go by its own
// count, whatever other processes left in the counter.
//
// Each step below is one a real sender and the receiver take, in the
// order the flake of P12_threeUidsFloodingAWaitingNameLeaveRoomForRoot
// (HarborSecurityTests) took them under load; the senders are played
// here on raw connections, the receiver by `pump` and `tryReceive`.
import Glibc
import Harbor
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// A wait packet carrying `eventfd`, as RemoteRoute's `waitForSlot` sends it.
private func sendWait(_ socket: SharedDescriptor, _ eventfd: SharedDescriptor) throws {
    let sent = try OutboundPacket.waitHeader.withUnsafeBytes { raw in
        Result { () throws(SystemError) in
            try SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: [eventfd.rawValue])
        }
    }.get()
    #expect(sent)
}

private func sendPacket(_ socket: SharedDescriptor, _ bytes: [UInt8]) throws {
    let sent = try bytes.withUnsafeBytes { raw in
        try SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: [])
    }
    #expect(sent)
}

@Suite(.serialized, .deadline(.seconds(120)))
struct PhantomSlotTests {
    /// Limit 1. Sender A takes the only slot and is slow to send (a CPU
    /// hog runs). Sender W finds none and waits: its wait packet makes the
    /// receiver look (no room by the counter, room by its own count: a
    /// suspicion), its timer's second one 2 ms later gets it a grant, and
    /// its timer's third, sent before it read the grant, registers it
    /// again. Then A sends, W sends on its grant, and the receiver takes
    /// both. The receiver's looks meanwhile must not count W's grant as
    /// taken once its message arrived: before, each look within the
    /// grant's 50 ms lowered the counter to limit − queued − grants, so with
    /// the queue empty again the counter showed its one slot taken, by no
    /// message, and a send from the receiving process was refused.
    @Test func P12_aGrantWhoseMessageArrivedLeavesNoSlotTaken() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            try raw.port.setQueueLimit(1)
            let core = raw.port.core
            let transport = try core.ensureTransport()
            let slots = transport.slots
            #expect(slots.free == 1)
            let waiting = try transport.makeConnection(.send)
            let eventfd = try SharedDescriptor.makeEventDescriptor()
            // A takes the slot; its packet has not left yet.
            #expect(slots.tryAcquire())
            // W: no slot; its wait packet, a look (the gap is seen).
            #expect(!slots.tryAcquire())
            try sendWait(waiting, eventfd)
            transport.pump(into: core)
            #expect(DescriptorIO.drainCounter(eventfd.rawValue) == nil, "no grant at the first look")
            // W's timer: a wait packet again, 2 ms or more later: a grant.
            usleep(3_000)
            try sendWait(waiting, eventfd)
            transport.pump(into: core)
            // W's timer fired again before it read the grant.
            try sendWait(waiting, eventfd)
            transport.pump(into: core)
            let value = DescriptorIO.drainCounter(eventfd.rawValue) ?? 0
            #expect(value >= SharedSlots.grant, "W was granted a slot (\(value))")
            // A sends on its slot, W on its grant; the receiver takes both.
            try sendPacket(raw.socket, validPacket(id: 1))
            try sendPacket(waiting, validPacket(id: 2))
            var received: [Int32] = []
            for _ in 0..<2 {
                guard let message = try? raw.port.receive(timeout: .seconds(5)) else { break }
                received.append(message.id)
            }
            #expect(received.sorted() == [1, 2])
            #expect(raw.port.status.queuedMessages == 0)
            // Nothing queued, parked or in flight: the counter shows the slot.
            #expect(slots.free == 1, "the counter shows \(slots.free) free slots, the port has 1")
            // The receiving process sends, timeout zero.
            let sender = raw.port.makeSendRight()
            #expect(throws: Never.self) { try sender.send(Message(id: 3, text: "local"), timeout: .zero) }
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 3)
            #expect(slots.free == 1)
            _ = waiting
        }
    }

    /// Slots other processes left taken with no message (a sender killed
    /// between taking its slot and sending, a grant its waiter never used,
    /// a counter written "full") do not refuse a send from the receiving
    /// process while its own queue has room; room written into the counter
    /// does not let one past the limit. The receiver's own count decides.
    @Test func P12_aSendFromTheReceivingProcessGoesByItsOwnCount() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            try raw.port.setQueueLimit(1)
            let slots = try raw.port.core.ensureTransport().slots
            let sender = raw.port.makeSendRight()
            // A sender took the only slot and died before sending.
            #expect(slots.tryAcquire())
            #expect(throws: Never.self) { try sender.send(Message(id: 1, text: "local"), timeout: .zero) }
            // The queue is full by the port's own count now.
            #expect(throws: PortError.self) { try sender.send(Message(id: 2, text: "over"), timeout: .zero) }
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 1)
            // A counter written "full".
            slots.counter.repair(free: -1000)
            #expect(throws: Never.self) { try sender.send(Message(id: 3, text: "local"), timeout: .zero) }
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 3)
            // A counter written "room": still one message at a time.
            slots.counter.repair(free: 1000)
            #expect(throws: Never.self) { try sender.send(Message(id: 4, text: "local"), timeout: .zero) }
            #expect(throws: PortError.self) { try sender.send(Message(id: 5, text: "over"), timeout: .zero) }
            #expect(raw.port.status.queuedMessages == 1, "the queue stayed within its limit")
            #expect(try raw.port.receive(timeout: .seconds(5)).id == 4)
        }
    }
}
