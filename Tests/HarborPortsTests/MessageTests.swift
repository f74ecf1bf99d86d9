// Harbor — P03: what a message holds, and what the runtime says about it.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct MessageTests {
    @Test func P03_idBodyRightsAndReplyArriveIntact() throws {
        try expectNoDescriptorLeak { () throws in
            let server = ReceiveRight()
            let client = ReceiveRight()
            let extra = ReceiveRight()
            var request = Message(id: 7, body: [1, 2, 3, 255])
            request.attach(extra.makeSendRight())
            request.setReplyRight(client.makeSendOnceRight())
            try server.makeSendRight().send(request)

            var received = try server.receive(timeout: .zero)
            #expect(received.id == 7)
            #expect(received.body == [1, 2, 3, 255])
            #expect(received.carriedRights == [.send])
            #expect(received.hasReplyRight == true)
            try received.reply(Message(id: 8, text: "pong"))
            #expect(received.hasReplyRight == false, "a send-once reply right is used up by the reply")

            let reply = try client.receive(timeout: .zero)
            #expect(reply.id == 8)
            #expect(reply.text == "pong")
        }
    }

    @Test func P03_trailerCarriesSequenceNumbersAndKernelIdentity() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            let send = receive.makeSendRight()
            for id in 0..<3 { try send.send(Message(id: Int32(id))) }
            let trailers = try (0..<3).map { _ in try receive.receive(timeout: .zero).trailer }
            #expect(trailers.map(\.sequenceNumber) == [1, 2, 3])
            for trailer in trailers {
                #expect(trailer.sender.pid == getpid())
                #expect(trailer.sender.uid == geteuid())
                #expect(trailer.sender.gid == getegid())
                #expect(trailer.port == receive.name)
                #expect(!trailer.isNotification)
            }
            #expect(receive.status.sequenceNumber == 3)
        }
    }

    @Test func P03_aReceivedTrailerIsRestampedWhenForwarded() throws {
        try expectNoDescriptorLeak { () throws in
            // A sender cannot pass off a trailer it received as its own: sending
            // stamps a fresh one, and a notification's flag does not survive.
            let first = ReceiveRight()
            let second = ReceiveRight()
            do { _ = first.makeSendOnceRight() }          // dies unused: a notification
            let notification = try first.receive(timeout: .zero)
            #expect(notification.trailer.isNotification)
            try second.makeSendRight().send(notification)
            let forwarded = try second.receive(timeout: .zero)
            #expect(!forwarded.trailer.isNotification)
            #expect(forwarded.notification == nil)
            #expect(forwarded.trailer.sequenceNumber == 1)
        }
    }

    /// A message this process sends keeps its extras (trailer, rights,
    /// reply, regions) in a copy-on-write box made only when one of them is
    /// set; copies must stay independent either way.
    @Test func P03_messageCopiesStayIndependentWithAndWithoutExtras() throws {
        try expectNoDescriptorLeak { () throws in
            var plain = MessageContent(id: 1, body: [1, 2])
            #expect(plain.isPlain)
            #expect(plain.trailer.sender == .current)
            #expect(plain.trailer.sequenceNumber == 0)
            var copy = plain
            copy.trailer.sequenceNumber = 9  // makes the copy's box only
            #expect(plain.trailer.sequenceNumber == 0)
            #expect(copy.trailer.sequenceNumber == 9)
            plain.trailer.sequenceNumber = 3
            var second = plain
            second.trailer.sequenceNumber = 4  // the box is shared now: copied first
            #expect(plain.trailer.sequenceNumber == 3)
            #expect(second.trailer.sequenceNumber == 4)
            #expect(plain.isPlain, "a trailer alone does not make a message carry anything")
            let port = ReceiveRight()
            var carrying = plain
            carrying.rights.append(.send(port.makeSendRight().token))
            #expect(!carrying.isPlain)
            #expect(plain.rights.isEmpty)
        }
    }

    @Test func P03_replyThroughASendRightMayBeRepeated() throws {
        try expectNoDescriptorLeak { () throws in
            let server = ReceiveRight()
            let client = ReceiveRight()
            var request = Message(id: 1)
            request.setReplyRight(client.makeSendRight())
            try server.makeSendRight().send(request)
            var received = try server.receive(timeout: .zero)
            try received.reply(Message(id: 2))
            try received.reply(Message(id: 3))
            #expect(try client.receive(timeout: .zero).id == 2)
            #expect(try client.receive(timeout: .zero).id == 3)
        }
    }

    @Test func P03_replyWithoutAReplyRightIsAnInvalidRightAndReturnsTheReply() throws {
        try expectNoDescriptorLeak { () throws in
            let server = ReceiveRight()
            try server.makeSendRight().send(Message(id: 1))
            var received = try server.receive(timeout: .zero)
            let error = expectPortError(.invalidRight) { try received.reply(Message(id: 2, text: "kept")) }
            #expect(error?.takeUndeliveredMessage()?.text == "kept")
        }
    }

    @Test func P03_takeReplyRightLetsTheReceiverAnswerLater() throws {
        try expectNoDescriptorLeak { () throws in
            let server = ReceiveRight()
            let client = ReceiveRight()
            var request = Message(id: 1)
            request.setReplyRight(client.makeSendOnceRight())
            try server.makeSendRight().send(request)
            var received = try server.receive(timeout: .zero)
            guard let reply = received.takeReplyRight() else {
                Issue.record("no reply right")
                return
            }
            #expect(received.hasReplyRight == false)
            try reply.send(Message(id: 2))
            #expect(try client.receive(timeout: .zero).id == 2)
        }
    }
}
