// Harbor — P06/P07: a moved receive right keeps everything a port has: when
// the send carrying it fails it comes back intact; when it arrives, its
// notification requests and its queued messages' senders came along.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing

struct MissingRight: Error {}

/// Sends `carrier` (right 0 a receive right), expecting `code`; returns the
/// receive right the failed send gave back.
private func failedSendGivesBack(
    _ carrier: consuming Message, to port: SendRight, timeout: Duration, expecting code: PortError.Code
) throws -> ReceiveRight {
    do {
        try port.send(carrier, timeout: timeout)
    } catch {
        #expect(error.code == code, "\(error)")
        guard var message = error.takeUndeliveredMessage() else { throw MissingRight() }
        return try message.takeReceiveRight(at: 0)
    }
    Issue.record("the send succeeded")
    throw MissingRight()
}

@Suite(.serialized, .deadline(.seconds(120)))
struct MoveTests {
    @Test func P07_aReceiveRightSentToADeadPortComesBackIntact() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let sender = try Peer(home: home)
            let dead = try Peer(home: home)
            let moving = ReceiveRight()
            let name = moving.name
            try moving.setQueueLimit(8)
            let notifications = ReceiveRight()
            moving.requestNoSendersNotification(to: notifications.makeSendOnceRight())
            // A remote sender holding a connection, and two local messages queued.
            var hold = Message(id: PeerCommand.hold)
            hold.attach(moving.makeSendRight())
            try sender.port.send(hold)
            #expect(try sender.request(Message(id: PeerCommand.useHeld)).text == "done")
            let local = moving.makeSendRight()
            try local.send(Message(id: 1, text: "m1"))
            try local.send(Message(id: 1, text: "m2"))
            let deadPort = dead.port
            dead.kill()

            var carrier = Message(id: 50)
            carrier.attach(moving)
            let port = try failedSendGivesBack(carrier, to: deadPort, timeout: .seconds(5), expecting: .deadName)
            #expect(port.name == name)
            #expect(port.queueLimit == 8)
            // Its queue: both local messages and the remote one.
            var texts: [String] = []
            for _ in 0..<3 { texts.append(try port.receive(timeout: .seconds(10)).text) }
            #expect(texts.sorted() == ["m1", "m2", "used by \(sender.pid)"])
            #expect(port.status.sequenceNumber == 3)
            // The remote sender's connection still reaches it, and local senders too.
            #expect(try sender.request(Message(id: PeerCommand.useHeld)).text == "done")
            #expect(try port.receive(timeout: .seconds(10)).text == "used by \(sender.pid)")
            try local.send(Message(id: 1, text: "m3"))
            #expect(try port.receive(timeout: .seconds(10)).text == "m3")
            // The no-senders request came back too: it fires once every sender is
            // gone, and nothing fired before (no send-once notification either).
            let nothingYet = switch notifications.tryReceive() { case .some: false; case .none: true }
            #expect(nothingYet)
            sender.stop()
            _ = consume local
            _ = port.tryReceive()  // notices the remote sender's connection closing
            let notification = try notifications.receive(timeout: .seconds(10))
            #expect(notification.notification == .noSenders(port: name))
            _ = consume port
        }
    }

    @Test func P07_aReceiveRightSentToAFullPortComesBackIntact() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let full = try Peer(home: home)
            _ = try full.request(Message(id: PeerCommand.stall, text: "1"))
            try full.port.send(Message(id: 20), timeout: .zero)
            let moving = ReceiveRight()
            let local = moving.makeSendRight()
            try local.send(Message(id: 1, text: "queued"))
            var carrier = Message(id: 51)
            carrier.attach(moving)
            let once = try failedSendGivesBack(carrier, to: full.port, timeout: .zero, expecting: .queueFull)
            var again = Message(id: 51)
            again.attach(once)
            let back = try failedSendGivesBack(again, to: full.port, timeout: .milliseconds(50), expecting: .timedOut)
            #expect(try back.receive(timeout: Duration.zero).text == "queued")
            try local.send(Message(id: 1, text: "after"))
            #expect(try back.receive(timeout: Duration.zero).text == "after")
            full.kill()
        }
    }

    @Test func P06_aNoSendersRequestTravelsWithTheReceiveRight() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let holder = try Peer(home: home)
            let sender = try Peer(home: home)
            let moving = ReceiveRight()
            let notifications = ReceiveRight()
            moving.requestNoSendersNotification(to: notifications.makeSendOnceRight())
            var hold = Message(id: PeerCommand.hold)
            hold.attach(moving.makeSendRight())
            try sender.port.send(hold)
            _ = try sender.request(Message(id: PeerCommand.echo, text: "sync"))
            var keep = Message(id: PeerCommand.keep)
            keep.attach(moving)
            #expect(try holder.request(keep).text == "kept")
            // The holder reads the port's connections (this process's proxy
            // closing among them): one sender is left, nothing fires.
            #expect(try holder.request(Message(id: PeerCommand.receiveKept, text: "300")).text == "timeout")
            let nothingYet = switch notifications.tryReceive() { case .some: false; case .none: true }
            #expect(nothingYet)
            // The last sender anywhere dies; the holder notices while receiving.
            sender.kill()
            let replies = ReceiveRight()
            var wait = Message(id: PeerCommand.receiveKept, text: "3000")
            wait.setReplyRight(replies.makeSendOnceRight())
            try holder.port.send(wait)
            let notification = try notifications.receive(timeout: .seconds(20))
            // Sent from the holder's process: an ordinary message there (the
            // notification mark does not cross processes), with the right id.
            #expect(notification.id == PortNotification.ID.noSenders)
            #expect(notification.trailer.sender.pid == holder.pid)
            #expect(try replies.receive(timeout: .seconds(20)).text == "timeout")
            holder.stop()
        }
    }

    @Test func P07_queuedMessagesKeepTheirSendersWhenTheirPortMoves() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let first = try Peer(home: home)
            let second = try Peer(home: home)
            let moving = ReceiveRight()
            for port in [first.port, second.port] {
                var hold = Message(id: PeerCommand.hold)
                hold.attach(moving.makeSendRight())
                try port.send(hold)
            }
            #expect(try first.request(Message(id: PeerCommand.useHeld)).text == "done")
            #expect(try second.request(Message(id: PeerCommand.useHeld)).text == "done")
            // One receive reads both connections: one message is taken, the
            // other queued here with its sender as this process's kernel said.
            let taken = try moving.receive(timeout: .seconds(10))
            #expect([first.pid, second.pid].contains(taken.trailer.sender.pid))
            #expect(taken.trailer.claimedOriginalSender == nil)
            #expect(moving.status.queuedMessages == 1)
            let queuedFrom = taken.trailer.sender.pid == first.pid ? second.pid : first.pid
            try moving.makeSendRight().send(Message(id: 1, text: "local"))
            var drain = Message(id: PeerCommand.drainTrailers)
            drain.attach(moving)
            let reply = try first.request(drain)
            let me = getpid()
            // text@sender@claim: the sender is this process, which delivered
            // them when the port moved; who first sent each is its claim (P11).
            #expect(reply.text == "used by \(queuedFrom)@\(me)@\(queuedFrom),local@\(me)@\(me)")
            first.stop()
            second.stop()
        }
    }

    @Test func P06_aDeadNameNotificationToAnotherProcessFiresWhenThePortDies() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            var watched = try Peer(home: home)
            let listener = try Peer(home: home)
            // A send-once right to a port in the listener's process.
            var made = try listener.request(Message(id: PeerCommand.keepNew))
            let target = try made.takeSendOnceRight(at: 0)
            watched.port.requestDeadNameNotification(to: target)
            let replies = ReceiveRight()
            var wait = Message(id: PeerCommand.receiveKept, text: "20000")
            wait.setReplyRight(replies.makeSendOnceRight())
            try listener.port.send(wait)
            // The watched port's process dies; nothing here sends to it again.
            watched.process.kill(SIGKILL)
            _ = watched.waitForExit()
            let reply = try replies.receive(timeout: .seconds(30))
            #expect(reply.text == "#\(PortNotification.ID.deadName)", "the listener heard of the death without a send")
            #expect(watched.port.isDead)
            listener.stop()
        }
    }
}
