// Harbor — P07: one model, any distance. Ports and rights among processes.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing

@Suite(.serialized, .deadline(.seconds(120)))
struct CrossProcessTests {
    @Test func P07_requestAndReplyBetweenTwoProcesses() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let reply = try peer.request(Message(id: PeerCommand.echo, text: "ping"))
            #expect(reply.id == PeerCommand.echo)
            #expect(reply.text == "ping")
            #expect(reply.trailer.sender.pid == peer.pid)
            #expect(reply.trailer.sender.uid == geteuid())
            #expect(reply.trailer.sequenceNumber == 1)
            peer.stop()
        }
    }

    /// Bodies of every size class cross intact both ways: small ones are
    /// copied out of the receiver's spare body, large ones (half the inline
    /// limit and more) take the spare itself, and a request carrying a reply
    /// right is put back together from the spare before it is decoded.
    @Test func P07_bodiesOfEverySizeCrossIntactBothWays() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let half = Message.maximumBodySize / 2
            for (index, size) in [0, 1, 64, 4096, half - 1, half, 40_000, Message.maximumBodySize, 100, half + 7].enumerated() {
                let body = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
                let reply = try peer.request(Message(id: PeerCommand.echo, body: body))
                #expect(reply.id == PeerCommand.echo)
                #expect(reply.body.count == size)
                #expect(reply.body == body, "a \(size)-byte body came back changed")
                #expect(reply.trailer.sender.pid == peer.pid)
            }
            peer.stop()
        }
    }

    /// A stream from another process, read ahead in batches (a batch that
    /// finds the queue empty becomes the queue), arrives whole and in order,
    /// with consecutive sequence numbers and its slots all given back.
    @Test func P07_aStreamFromAnotherProcessArrivesWholeAndInOrder() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            try home.setQueueLimit(1024)
            let peer = try Peer(home: home)
            let count = 700
            let reply = try peer.request(Message(id: PeerCommand.burst, text: "\(count)"))
            #expect(reply.text == "sent")
            var first: UInt64 = 0
            for index in 0..<count {
                let message = try home.receive(timeout: .seconds(10))
                #expect(message.id == Int32(index))
                #expect(message.text == "\(index)")
                #expect(message.trailer.sender.pid == peer.pid)
                if index == 0 { first = message.trailer.sequenceNumber }
                #expect(message.trailer.sequenceNumber == first + UInt64(index))
            }
            let extra = home.tryReceive()?.id
            #expect(extra == nil, "nothing more than was sent")
            #expect(home.status.queuedMessages == 0)
            peer.stop()
        }
    }

    /// A receiver asleep on a port that has never had a sender in another
    /// process waits on the port's eventfd alone; when a send right to the
    /// port leaves for another process, the port gains a connection, and the
    /// sleeper must hear what arrives through it.
    @Test func P07_aReceiverAlreadyAsleepHearsTheFirstRemoteSender() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let target = ReceiveRight()
            _ = try target.withReadinessDescriptor { $0 }
            let right = target.makeSendRight()
            let peerPort = peer.port
            let sender = TestThread { () -> Bool in
                // Give the main thread time to fall asleep in receive() first
                // (the test holds either way; this makes it test the nudge).
                var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
                nanosleep(&pause, nil)
                var use = Message(id: PeerCommand.use)
                use.attach(right)
                return (try? peerPort.send(use)) != nil
            }
            let start = ContinuousClock.now
            let used = try target.receive(timeout: .seconds(30))
            let waited = ContinuousClock.now - start
            #expect(used.id == PeerCommand.used)
            #expect(used.trailer.sender.pid == peer.pid)
            #expect(waited < .seconds(10), "the sleeper woke only at its deadline (\(waited)): it never heard the connection")
            #expect(sender.join())
            peer.stop()
        }
    }

    /// Mach's `mach_msg` with a timeout returns a message that is queued,
    /// however late its caller wakes. The peer waits in `receive(timeout:)`
    /// on a port this process sends to; it is stopped inside its wait, the
    /// message arrives, its deadline passes, and it is resumed: its wait then
    /// ends with no event (epoll_pwait2 fails with EINTR after SIGCONT), past
    /// the deadline, with the message waiting in the connection.
    @Test func P04_P07_aReceiveResumedPastItsDeadlineStillTakesTheMessageThatArrived() throws {
        try expectResumedReceiveTakesTheMessage(PeerCommand.receiveKept)
    }

    /// P04, P05: the same through a port set.
    @Test func P04_P05_aSetReceiveResumedPastItsDeadlineStillTakesTheMessageThatArrived() throws {
        try expectResumedReceiveTakesTheMessage(PeerCommand.receiveKeptInSet)
    }

    /// A peer keeps a port this process sends to and waits on it with
    /// `command` (`receiveKept`, `receiveKeptInSet`) for one second; it is
    /// stopped inside its wait, a message arrives, the deadline passes, it is
    /// resumed: the message sent while it was stopped is what it answers.
    private func expectResumedReceiveTakesTheMessage(_ command: Int32) throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let moving = ReceiveRight()
            let right = moving.makeSendRight()
            var keep = Message(id: PeerCommand.keep)
            keep.attach(moving)
            #expect(try peer.request(keep).text == "kept")
            // A first message opens this process's connection to the port.
            try right.send(Message(id: PeerCommand.used, text: "first"))
            #expect(try peer.request(Message(id: command, text: "5000")).text == "first")
            let replies = ReceiveRight()
            var wait = Message(id: command, text: "1000")
            wait.setReplyRight(replies.makeSendOnceRight())
            try peer.port.send(wait)
            var pause = timespec(tv_sec: 0, tv_nsec: 300_000_000)
            nanosleep(&pause, nil)  // the peer is asleep in its receive
            peer.process.kill(SIGSTOP)
            // Sent only once the peer really stopped: a message sent while
            // the stop is still on its way wakes the wait with an event.
            #expect(waitUntilStopped(peer.pid))
            try right.send(Message(id: PeerCommand.used, text: "sent while stopped"))
            pause = timespec(tv_sec: 1, tv_nsec: 200_000_000)
            nanosleep(&pause, nil)  // past the peer's deadline
            peer.process.kill(SIGCONT)
            #expect(try replies.receive(timeout: .seconds(20)).text == "sent while stopped")
            peer.stop()
        }
    }

    @Test func P07_aSendRightPassedFromAToBToCIsUsedByC() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let b = try Peer(home: home)
            let c = try Peer(home: home)
            let target = ReceiveRight()
            var forward = Message(id: PeerCommand.forward)
            forward.attach(target.makeSendRight())
            forward.attach(c.port)
            try b.port.send(forward)
            let used = try target.receive(timeout: .seconds(30))
            #expect(used.id == PeerCommand.used)
            #expect(used.text == "used by \(c.pid)")
            #expect(used.trailer.sender.pid == c.pid, "C sent it, whatever B and A did")
            #expect(used.trailer.port == target.name)
            b.stop()
            c.stop()
        }
    }

    @Test func P07_aReceiveRightMovesWithItsQueuedMessages() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let moving = ReceiveRight()
            let sender = moving.makeSendRight()
            for index in 1...3 { try sender.send(Message(id: 10, text: "m\(index)")) }
            var carrier = Message(id: PeerCommand.drain)
            carrier.attach(moving)
            let reply = try peer.request(carrier)
            #expect(reply.text == "m1,m2,m3")
            // The send right left behind followed the port, which the peer
            // destroyed after draining it: it is a dead name now.
            #expect(sender.isDead)
            expectCode(.deadName) { try sender.send(Message(id: 11)) }
            peer.stop()
        }
    }

    @Test func P07_theQueueLimitHoldsAcrossProcesses() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let stalled = try peer.request(Message(id: PeerCommand.stall, text: "2"))
            #expect(stalled.text == "stalled")
            try peer.port.send(Message(id: 20), timeout: .zero)
            try peer.port.send(Message(id: 21), timeout: .zero)
            expectCode(.queueFull) { try peer.port.send(Message(id: 22), timeout: .zero) }
            let start = ContinuousClock.now
            expectCode(.timedOut) { try peer.port.send(Message(id: 23), timeout: .milliseconds(100)) }
            #expect(ContinuousClock.now - start >= .milliseconds(100))
            peer.kill()
        }
    }

    @Test func P07_aReceiverKilledWhileASenderBlocks_givesDeadNameAndTheNotification() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            var peer = try Peer(home: home)
            _ = try peer.request(Message(id: PeerCommand.stall, text: "1"))
            try peer.port.send(Message(id: 30), timeout: .zero)
            let notifications = ReceiveRight()
            peer.port.requestDeadNameNotification(to: notifications.makeSendOnceRight())
            let port = peer.port
            let pid = peer.pid
            let killer = TestThread {
                // Act only once the sender below really waits for room.
                #expect(port.waitUntilASenderBlocks(timeout: .seconds(30)))
                Glibc.kill(pid, SIGKILL)
            }
            expectCode(.deadName) { try peer.port.send(Message(id: 31)) }
            killer.join()
            #expect(peer.port.isDead)
            let notification = try notifications.receive(timeout: .seconds(10))
            #expect(notification.notification == .deadName(port: peer.port.name))
            _ = peer.waitForExit()
        }
    }

    @Test func P07_aSenderKilled_deliversNoSenders() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let watched = ReceiveRight()
            watched.requestNoSendersNotification(to: watched.makeSendOnceRight())
            var carrier = Message(id: PeerCommand.hold)
            carrier.attach(watched.makeSendRight())
            try peer.port.send(carrier)
            let reply = try peer.request(Message(id: PeerCommand.echo, text: "sync"))
            #expect(reply.text == "sync")
            let nothingYet = switch watched.tryReceive() { case .some: false; case .none: true }
            #expect(nothingYet, "the peer still holds a send right")
            peer.kill()
            let notification = try watched.receive(timeout: .seconds(10))
            #expect(notification.notification == .noSenders(port: watched.name))
        }
    }
}

/// Waits (up to 10 s) until `pid`'s main thread shows as stopped in
/// `/proc/<pid>/stat`; true once it does.
func waitUntilStopped(_ pid: pid_t) -> Bool {
    for _ in 0..<1000 {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            var bytes = [UInt8](repeating: 0, count: 512)
            let count = read(descriptor, &bytes, bytes.count)
            close(descriptor)
            // "pid (name) S ...": the state follows the last parenthesis.
            if count > 0, let paren = bytes[0..<count].lastIndex(of: UInt8(ascii: ")")),
               paren + 2 < count, bytes[paren + 2] == UInt8(ascii: "T") {
                return true
            }
        }
        var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
        nanosleep(&pause, nil)
    }
    return false
}

func expectCode(_ code: PortError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(code), nothing thrown", sourceLocation: sourceLocation)
    } catch let error as PortError {
        #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

