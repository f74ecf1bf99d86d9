// Harbor — P12: a port's descriptor is never readable while its queue is
// empty, whatever crossed processes (the tests count wake-ups of a port, a
// port set and a run loop that sit idle after traffic with another
// process); and P06: no-senders across processes arrives although nobody
// receives on the port.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Synchronization
import Testing
@testable import HarborPorts
@testable import HarborTransport

/// Whether `fd` polls readable now.
private func pollsReadable(_ fd: CInt) -> Bool {
    var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&probe, 1, 0) == 1 && probe.revents & Int16(POLLIN) != 0
}

/// What a receive loop watching one descriptor saw.
private struct Wakes {
    var messages = 0
    /// Wake-ups that found no message: the descriptor lied.
    var empty = 0
}

/// Runs a level-triggered receive loop on `fd` until `deadline`, the way a
/// daemon does (harbord watches its port's descriptor and calls
/// `tryReceive` until it returns nil): each wake-up takes what `take` finds.
private func watch(_ fd: CInt, until deadline: ContinuousClock.Instant, take: () -> Bool) -> Wakes {
    var wakes = Wakes()
    while true {
        let left = ContinuousClock.now.duration(to: deadline)
        if left <= .zero { return wakes }
        var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(1, left / .milliseconds(1)))
        guard poll(&probe, 1, ms) == 1 else { continue }
        var took = 0
        while take() { took += 1 }
        wakes.messages += took
        if took == 0 { wakes.empty += 1 }
        // A loop that spins has made its point: stop counting.
        if wakes.empty > 10_000 { return wakes }
    }
}

/// The CPU time this thread has used.
private func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}

/// Gives `peer` a send right to `port`, has it send one message on it and
/// replies: traffic both ways, and the port now has a connection.
private func exchange(with peer: borrowing Peer, through right: SendRight) throws {
    var hold = Message(id: PeerCommand.hold)
    hold.attach(right)
    try peer.port.send(hold)
    let reply = try peer.request(Message(id: PeerCommand.useHeld))
    #expect(reply.text == "done")
}

@Suite(.serialized, .deadline(.seconds(120)))
struct ExactReadinessTests {
    @Test func P12_aPortThatSentASendRightToAnotherProcessIsNotReadableWhileEmpty() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let port = ReceiveRight()
            let fd = try port.withReadinessDescriptor { $0 }
            #expect(!pollsReadable(fd))
            try exchange(with: peer, through: port.makeSendRight())
            // The message from the peer, then 300 ms of nothing.
            let wakes = watch(fd, until: .now + .milliseconds(400)) { port.tryReceive() != nil }
            #expect(wakes.messages == 1)
            #expect(wakes.empty <= 1, "\(wakes.empty) wake-ups found an empty queue")
            #expect(!pollsReadable(fd), "readable with an empty queue")
            peer.stop()
        }
    }

    @Test func P12_aNudgeIsClearedByTheNextEmptyLook() throws {
        let port = ReceiveRight()
        let fd = try port.withReadinessDescriptor { $0 }
        // A spurious nudge (the one a receiver asleep on the eventfd gets
        // when the port starts receiving from other processes).
        _ = try port.core.ensureTransport()
        port.core.state.withLock { $0.readiness }?.nudge()
        #expect(pollsReadable(fd))
        let nothing = switch port.tryReceive() { case .some: false; case .none: true }
        #expect(nothing)
        #expect(!pollsReadable(fd), "the empty look cleared it")
    }

    @Test func P12_aPortSetWatchingSuchAPortSleepsWhileIdle() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let port = ReceiveRight()
            let set = try PortSet()
            try set.insert(port)
            try exchange(with: peer, through: port.makeSendRight())
            let wakes = watch(set.core.descriptor, until: .now + .milliseconds(400)) {
                (try? set.receive(timeout: .zero)) != nil
            }
            #expect(wakes.messages == 1)
            #expect(wakes.empty <= 1, "\(wakes.empty) wake-ups of the set found nothing")
            // A blocking receive on the set sleeps: it does not spin until its timeout.
            let start = threadCPUTime()
            _ = try? set.receive(timeout: .milliseconds(300))
            let cpu = threadCPUTime() - start
            #expect(cpu < .milliseconds(30), "an idle receive on the set used \(cpu) of CPU")
            peer.stop()
        }
    }

    @Test func P12_aRunLoopWatchingSuchAPortSleepsWhileIdle() throws {
        let home = ReceiveRight()
        let peer = try Peer(home: home)
        let received = Atomic<Int>(0)
        let source = try PortSource(ReceiveRight()) { _ in received.add(1, ordering: .relaxed) }
        let wakeUps = Atomic<Int>(0)
        let worker = LoopWorker(name: "p12-idle")
        worker.loop.add(LoopObserver(activities: .afterWaiting, repeats: true) { _ in
            wakeUps.add(1, ordering: .relaxed)
        }, forMode: .default)
        worker.loop.add(source, forMode: .default)
        try exchange(with: peer, through: source.makeSendRight())
        let deadline = ContinuousClock.now + .seconds(10)
        while received.load(ordering: .relaxed) == 0 && ContinuousClock.now < deadline { usleep(1000) }
        #expect(received.load(ordering: .relaxed) == 1)
        usleep(50_000)
        let before = wakeUps.load(ordering: .relaxed)
        usleep(300_000)
        let idle = wakeUps.load(ordering: .relaxed) - before
        #expect(idle <= 1, "the loop woke \(idle) times in 300 ms with nothing to do")
        source.invalidate()
        worker.stop()
        peer.stop()
    }

    @Test func P12_packetsThatAreNotMessagesDoNotLeaveThePortReadable() throws {
        try expectNoDescriptorLeak {
            let raw = try RawConnection()
            let fd = try raw.port.withReadinessDescriptor { $0 }
            // Refused packets and a wait packet's worth of garbage, several
            // on one connection: one empty look consumes them all.
            for _ in 0..<5 { try raw.send(Array(validPacket().prefix(10))) }
            #expect(pollsReadable(fd))
            #expect(raw.nothingDelivered())
            #expect(!pollsReadable(fd), "refused packets left the port readable")
        }
    }

    // MARK: No-senders without a receiver (P06)

    private func noSendersArrivesWithoutAReceive(killing: Bool) throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let notify = ReceiveRight()
            let subject = ReceiveRight()
            subject.requestNoSendersNotification(to: notify.makeSendOnceRight())
            var hold = Message(id: PeerCommand.hold)
            hold.attach(subject.makeSendRight())
            try peer.port.send(hold)
            #expect(try peer.request(Message(id: PeerCommand.echo, text: "sync")).text == "sync")
            #expect(notify.status.queuedMessages == 0, "the peer still holds a send right")
            if killing { peer.kill() } else { peer.stop() }
            // Nobody receives on `subject`: the notification still comes.
            let note = try notify.receive(timeout: .seconds(5))
            #expect(note.notification == .noSenders(port: subject.name))
            #expect(subject.status.sendRights == 0)
            // The watching thread delivered it; it lets go of the port just after.
            #expect(RemoteDeathWatch.shared.waitUntilIdle(timeout: .seconds(5)))
        }
    }

    @Test func P06_noSendersFromAnotherProcessArrivesWithoutAReceiveOnThePort() throws {
        try noSendersArrivesWithoutAReceive(killing: false)
    }

    @Test func P06_noSendersFromAKilledProcessArrivesWithoutAReceiveOnThePort() throws {
        try noSendersArrivesWithoutAReceive(killing: true)
    }
}
