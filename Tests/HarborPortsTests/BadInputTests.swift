// Harbor — bad calls get specific typed errors, never a trap.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct BadInputTests {
    @Test func P04_oversizedBodyIsMessageTooLargeAndComesBack() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            let body = [UInt8](repeating: 7, count: Message.maximumBodySize + 1)
            let error = expectPortError(.messageTooLarge) { try port.makeSendRight().send(Message(id: 1, body: body)) }
            #expect(error?.takeUndeliveredMessage()?.body.count == body.count)
            #expect(error?.takeUndeliveredMessage()?.id == nil, "the message is handed back once")
            #expect(port.status.queuedMessages == 0)
            // Exactly at the limit is fine.
            try port.makeSendRight().send(Message(id: 2, body: Array(body.dropLast())))
        }
    }

    @Test func P04_tooManyCarriedRightsIsMessageTooLargeAndReleasesNothing() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            let target = ReceiveRight()
            var message = Message(id: 1)
            for _ in 0...Message.maximumCarriedRights { message.attach(target.makeSendRight()) }
            let error = sendExpectingFailure(message, to: port.makeSendRight())
            #expect(error?.code == .messageTooLarge)
            #expect(target.status.sendRights == Message.maximumCarriedRights + 1, "the rights are in the error")
            var returned = error?.takeUndeliveredMessage()
            #expect(returned?.carriedRights.count == Message.maximumCarriedRights + 1)
            returned = nil
            #expect(target.status.sendRights == 0)
        }
    }

    @Test func P04_aFailedSendKeepsTheReceiveRightItCarried() throws {
        try expectNoDescriptorLeak { () throws in
            let carried = ReceiveRight()
            let carriedName = carried.name
            let dead = ReceiveRight().makeSendRight()
            var message = Message(id: 1)
            message.attach(carried)
            let error = sendExpectingFailure(message, to: dead)
            #expect(error?.code == .deadName)
            guard var back = error?.takeUndeliveredMessage() else {
                Issue.record("the undelivered message did not come back")
                return
            }
            let recovered = try back.takeReceiveRight(at: 0)
            let (name, isDead) = (recovered.name, recovered.status.isDead)
            #expect(name == carriedName)
            #expect(!isDead)
        }
    }

    @Test func P04_errorsNameTheirCodeAndDetail() {
        expectNoDescriptorLeak {
            let error = expectPortError(.deadName) { try ReceiveRight().makeSendRight().send(Message(id: 1)) }
            #expect(error?.description.hasPrefix("dead name: send to port#") == true)
            #expect(PortError.Code.deadName ~= (error ?? PortError(.timedOut, "")))
        }
    }
}

/// Sends `message`, expecting the send to fail; returns the error.
private func sendExpectingFailure(_ message: consuming Message, to send: SendRight) -> PortError? {
    do {
        try send.send(message)
        Issue.record("the send was expected to fail")
        return nil
    } catch {
        return error
    }
}
