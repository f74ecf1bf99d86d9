// Harbor — P06: no-senders, dead-name, send-once and port-destroyed notifications.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct NotificationTests {
    @Test func P06_noSendersArrivesWhenTheLastSendRightDies() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            let notify = ReceiveRight()
            var senders: [SendRight] = [port.makeSendRight(), port.makeSendRight()]
            port.requestNoSendersNotification(to: notify.makeSendOnceRight())
            senders.removeLast()
            #expect(notify.status.queuedMessages == 0)
            senders.removeAll()
            let message = try notify.receive(timeout: .zero)
            #expect(message.notification == .noSenders(port: port.name))
            #expect(message.trailer.isNotification)
        }
    }

    @Test func P06_deadNameArrivesWhenTheReceiveRightIsDestroyed() throws {
        try expectNoDescriptorLeak { () throws in
            let notify = ReceiveRight()
            let send: SendRight
            let name: PortName
            do {
                let port = ReceiveRight()
                name = port.name
                send = port.makeSendRight()
                send.requestDeadNameNotification(to: notify.makeSendOnceRight())
                #expect(notify.status.queuedMessages == 0)
            }
            #expect(try notify.receive(timeout: .zero).notification == .deadName(port: name))
            #expect(send.isDead)
        }
    }

    @Test func P06_deadNameRequestedOnAnAlreadyDeadPortFiresAtOnce() throws {
        try expectNoDescriptorLeak { () throws in
            let notify = ReceiveRight()
            let send = ReceiveRight().makeSendRight()    // the receive right dies at once
            send.requestDeadNameNotification(to: notify.makeSendOnceRight())
            #expect(try notify.receive(timeout: .zero).notification == .deadName(port: send.name))
        }
    }

    @Test func P06_sendOnceArrivesWhenASendOnceRightDiesUnused() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            do { _ = port.makeSendOnceRight() }
            #expect(try port.receive(timeout: .zero).notification == .sendOnce(port: port.name))
            // A used one sends nothing more.
            try port.makeSendOnceRight().send(Message(id: 3))
            let next = try port.receive(timeout: .zero)
            #expect(next.id == 3 && next.notification == nil)
            #expect(port.status.queuedMessages == 0)
        }
    }

    @Test func P06_portDestroyedHandsTheReceiveRightBackWithItsQueue() throws {
        try expectNoDescriptorLeak { () throws in
            let keeper = ReceiveRight()
            let send: SendRight
            do {
                let port = ReceiveRight()
                send = port.makeSendRight()
                port.requestPortDestroyedNotification(to: keeper.makeSendOnceRight())
                try send.send(Message(id: 1))
            }
            #expect(!send.isDead, "the port was handed over, not destroyed")
            var notification = try keeper.receive(timeout: .zero)
            #expect(notification.notification == .portDestroyed(port: send.name))
            let recovered = try notification.takeReceiveRight(at: 0)
            #expect(try recovered.receive(timeout: .zero).id == 1)
            try send.send(Message(id: 2))
            #expect(try recovered.receive(timeout: .zero).id == 2)
        }
    }

    @Test func P06_portDestroyedToADeadPortDestroysForReal() throws {
        try expectNoDescriptorLeak { () throws in
            let send: SendRight
            do {
                let port = ReceiveRight()
                send = port.makeSendRight()
                do {
                    let keeper = ReceiveRight()
                    port.requestPortDestroyedNotification(to: keeper.makeSendOnceRight())
                }   // the keeper dies first
            }
            #expect(send.isDead)
        }
    }

    @Test func P06_anUnfiredRequestReleasesItsRightWithASendOnceNotification() throws {
        try expectNoDescriptorLeak { () throws in
            let notify = ReceiveRight()
            do {
                let port = ReceiveRight()
                port.requestNoSendersNotification(to: notify.makeSendOnceRight())
            }   // destroyed before any send right existed and died
            #expect(try notify.receive(timeout: .zero).notification == .sendOnce(port: notify.name))
        }
    }

    @Test func P06_notificationsBypassAFullQueue() throws {
        try expectNoDescriptorLeak { () throws in
            let notify = ReceiveRight()
            try notify.setQueueLimit(1)
            try notify.makeSendRight().send(Message(id: 0))
            let port = ReceiveRight()
            port.requestNoSendersNotification(to: notify.makeSendOnceRight())
            do { _ = port.makeSendRight() }
            _ = try notify.receive(timeout: .zero)
            #expect(try notify.receive(timeout: .zero).notification == .noSenders(port: port.name))
        }
    }

    @Test func P06_aSenderCannotForgeANotification() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            var body = [UInt8](repeating: 0, count: 8)
            body[0] = UInt8(truncatingIfNeeded: port.name.rawValue)
            try port.makeSendRight().send(Message(id: PortNotification.ID.deadName, body: body))
            #expect(try port.receive(timeout: .zero).notification == nil)
        }
    }
}
