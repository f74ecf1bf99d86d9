// Harbor — P01 (ports and rights) and P02 (dispositions).
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct RightsTests {
    @Test func P01_onePortOneReceiveRightManySendRights() throws {
        try expectNoDescriptorLeak {
            let receive = ReceiveRight()
            let senders = (0..<3).map { _ in receive.makeSendRight() }
            #expect(receive.status.sendRights == 3)
            #expect(senders.allSatisfy { $0.name == receive.name })
            for (index, sender) in senders.enumerated() {
                try sender.send(Message(id: Int32(index)))
            }
            let ids = try (0..<3).map { _ in try receive.receive(timeout: .zero).id }
            #expect(ids == [0, 1, 2])
        }
    }

    /// Copies share one right: the port counts one, each copy sends to it,
    /// and the right dies only with the last copy (no-senders fires then,
    /// once, and not while any copy lives).
    @Test func P01_copiesOfASendRightAreOneRight() throws {
        try expectNoDescriptorLeak {
            let receive = ReceiveRight()
            let notify = ReceiveRight()
            receive.requestNoSendersNotification(to: notify.makeSendOnceRight())
            var copies = Array(repeating: receive.makeSendRight(), count: 10)
            #expect(receive.status.sendRights == 1, "copying a SendRight value does not make new rights")
            #expect(receive.status.madeSendRights == 1, "a copy is not a make-send")
            for (index, copy) in copies.enumerated() {
                try copy.send(Message(id: Int32(index)), timeout: .zero)
                #expect(try receive.receive(timeout: .zero).id == Int32(index), "every copy sends to the one port")
            }
            copies.removeLast(9)
            #expect(receive.status.sendRights == 1, "dropping copies while one lives releases nothing")
            #expect(notify.status.queuedMessages == 0, "no-senders while a copy lives")
            copies.removeAll()
            #expect(receive.status.sendRights == 0, "the last copy's death releases the right")
            #expect(try notify.receive(timeout: .zero).notification == .noSenders(port: receive.name))
            #expect(notify.status.queuedMessages == 0, "one right, one no-senders")
        }
    }

    @Test func P01_sendOnceRightCarriesExactlyOneMessage() throws {
        let receive = ReceiveRight()
        let once = receive.makeSendOnceRight()
        #expect(receive.status.sendOnceRights == 1)
        try once.send(Message(id: 42))   // consumes `once`: a second send does not compile
        #expect(receive.status.sendOnceRights == 0)
        let message = try receive.receive(timeout: .zero)
        #expect(message.id == 42)
        #expect(message.notification == nil, "a used send-once right sends no send-once notification")
        #expect(receive.status.queuedMessages == 0)
    }

    @Test func P02_copySendLeavesTheSenderItsRight() throws {
        let target = ReceiveRight()
        let carrier = ReceiveRight()
        let send = target.makeSendRight()
        var message = Message(id: 1)
        message.attach(send)                       // copy-send: we keep `send`
        try carrier.makeSendRight().send(message)
        var received = try carrier.receive(timeout: .zero)
        let carried = try received.takeSendRight(at: 0)
        try send.send(Message(id: 2))              // ours still works
        try carried.send(Message(id: 3))           // and so does theirs
        #expect(try target.receive(timeout: .zero).id == 2)
        #expect(try target.receive(timeout: .zero).id == 3)
        #expect(carried == send)
    }

    @Test func P02_moveSendTransfersTheOnlyReference() throws {
        let target = ReceiveRight()
        let carrier = ReceiveRight()
        target.requestNoSendersNotification(to: carrier.makeSendOnceRight())
        do {
            var message = Message(id: 1)
            message.attach(target.makeSendRight())   // move-send: no reference stays with us
            try carrier.makeSendRight().send(message)
        }
        #expect(target.status.sendRights == 1, "the right lives on inside the queued message")
        var received = try carrier.receive(timeout: .zero)
        do {
            let moved = try received.takeSendRight(at: 0)
            try moved.send(Message(id: 9))
        }
        #expect(try target.receive(timeout: .zero).id == 9)
        #expect(target.status.sendRights == 0)
        let notification = try carrier.receive(timeout: .zero).notification
        #expect(notification == .noSenders(port: target.name))
    }

    @Test func P02_makeSendAndMakeSendOnceCreateNewRights() throws {
        let receive = ReceiveRight()
        let carrier = ReceiveRight()
        var message = Message(id: 1)
        message.attach(receive.makeSendRight())
        message.attach(receive.makeSendOnceRight())
        #expect(receive.status.madeSendRights == 1)
        #expect(receive.status.sendOnceRights == 1)
        try carrier.makeSendRight().send(message)
        var received = try carrier.receive(timeout: .zero)
        #expect(received.carriedRights == [.send, .sendOnce])
        let once = try received.takeSendOnceRight(at: 1)
        try once.send(Message(id: 5))
        #expect(try receive.receive(timeout: .zero).id == 5)
    }

    @Test func P02_moveReceiveCarriesThePortAndItsQueue() throws {
        let carrier = ReceiveRight()
        let moving = ReceiveRight()
        let send = moving.makeSendRight()
        try send.send(Message(id: 1))
        try send.send(Message(id: 2))
        var message = Message(id: 100)
        message.attach(moving)                     // move-receive: `moving` is gone here
        try carrier.makeSendRight().send(message)
        #expect(!send.isDead, "the port lives on while its receive right travels")
        try send.send(Message(id: 3))
        var received = try carrier.receive(timeout: .zero)
        let newOwner = try received.takeReceiveRight(at: 0)
        #expect(newOwner.name == send.name)
        let ids = try (0..<3).map { _ in try newOwner.receive(timeout: .zero).id }
        #expect(ids == [1, 2, 3])
    }

    @Test func P02_droppingAMessageReleasesTheRightsItCarries() throws {
        let target = ReceiveRight()
        do {
            var message = Message(id: 1)
            message.attach(target.makeSendRight())
            message.attach(target.makeSendOnceRight())
            #expect(target.status.sendRights == 1)
            _ = consume message
        }
        #expect(target.status.sendRights == 0)
        #expect(target.status.sendOnceRights == 0)
        // The send-once right died unused: its port hears of it.
        #expect(try target.receive(timeout: .zero).notification == .sendOnce(port: target.name))
    }

    @Test func P02_takingARightTwiceIsAnInvalidRightError() throws {
        let target = ReceiveRight()
        var message = Message(id: 1)
        message.attach(target.makeSendRight())
        _ = try message.takeSendRight(at: 0)
        #expect(message.carriedRights == [.taken])
        expectPortError(.invalidRight) { _ = try message.takeSendRight(at: 0) }
        expectPortError(.invalidRight) { _ = try message.takeReceiveRight(at: 3) }
    }
}
