// Harbor — P12: a process that writes *room* into a port's slot counter, in
// a loop, costs no honest sender a message.
//
// Every sender maps the counter writable, so a writer can make honest
// senders believe there is room and send past the queue limit. The receiver
// must then neither refuse their messages (they were sent in good faith)
// nor queue past its limit: it stops reading a connection whose message
// arrives at a full queue, and reads it again when a slot frees
// (Docs/CrossProcess.md, "Back-pressure"). The writer's own excess stays in
// its own socket, where its sends stall.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing

extension SecurityTests {
    @Suite struct ScribbledRoomTests {
        /// P12: harbor-adversary (uid 65534) writes room into the counter
        /// of a port of this process every 50 µs and floods it with counted
        /// messages taken on no slot, while harbor-peer (root, another
        /// process) sends 1,000 messages to the same port, which this process
        /// receives slowly: every honest message arrives, in order; nothing
        /// is refused; the queue never holds more than its limit; the
        /// adversary's flood stalls in its own socket; descriptors come back.
        @Test func P12_roomWrittenIntoTheCounterCostsNoHonestMessage() throws {
            try expectNoDescriptorLeak {
                let limit = 4, count = 1000
                let home = ReceiveRight()
                try home.setQueueLimit(limit)
                let honest = try HonestPeer(home: home)
                // The adversary asks the port it is given for a send right of
                // its own (a connection of its own), as it asks a service.
                let door = ReceiveRight()
                let victim = ReceiverVictim(door: door.makeSendRight())
                let adversary = TestThread {
                    try? runAdversary("scribble-room", against: victim, ["--count", "2000", "--hold", "1"],
                                      timeout: .seconds(60))
                }
                var grant = try door.receive(timeout: .seconds(30))
                var granted = Message(id: 41)
                granted.attach(home.makeSendRight())
                try grant.reply(granted)
                usleep(200_000)  // the writer is at it, the flood under way

                let refusedBefore = WireRejections.total
                let port = honest.port
                let burst = TestThread { () -> String in
                    let replies = ReceiveRight()
                    var message = Message(id: PeerCommand.burst, text: "\(count)")
                    message.setReplyRight(replies.makeSendOnceRight())
                    do {
                        try port.send(message, timeout: .seconds(30))
                        return try replies.receive(timeout: .seconds(60)).text
                    } catch {
                        return "failed: \(error)"
                    }
                }
                var ids: [Int32] = []
                var fromAdversary = 0, deepest = 0
                while ids.count < count, let message = try? home.receive(timeout: .seconds(10)) {
                    deepest = max(deepest, home.status.queuedMessages)
                    if message.trailer.sender.pid == honest.pid {
                        ids.append(message.id)
                    } else {
                        fromAdversary += 1
                    }
                    usleep(2000)  // a slow receiver: the queue is full most of the time
                }
                #expect(burst.join() == "sent")
                #expect(ids.count == count, "every honest message arrived (\(ids.count) of \(count))")
                let gaps = zip(ids, 0...).filter { $0.0 != Int32($0.1) }.count
                #expect(gaps == 0, "in order, none missing: \(gaps) out of place, last \(ids.last ?? -1)")
                #expect(WireRejections.total == refusedBefore, "nothing refused: \(refusalCounts())")
                #expect(deepest <= limit, "the queue held \(deepest), past its limit of \(limit)")

                let run = adversary.join()
                let account = run.map { "\($0)" } ?? "-"
                #expect(run?.finished == true, "the adversary ran to its end: \(account)")
                #expect(run?["written"] == "1", "the counter was written: \(account)")
                #expect((run?.int("stalled") ?? 0) > 0, "its flood stalled in its own socket: \(account)")
                // What it did send is delivered, late, its connection read
                // only as slots free; then its connection ends.
                while (try? home.receive(timeout: .milliseconds(500))) != nil { fromAdversary += 1 }
                #expect(fromAdversary == run?.int("sent"), "the adversary's messages are its own business")
                honest.stop()
            }
        }
    }
}

/// This process's refusal counts that are not zero, by reason.
func refusalCounts() -> String {
    WireRejectionReason.allCases.filter { WireRejections.count($0) > 0 }
        .map { "\($0)=\(WireRejections.count($0))" }.joined(separator: " ")
}

/// A port of this process that the adversary attacks: `door` answers its
/// request for a send right (the test does, by hand).
final class ReceiverVictim: Victim, @unchecked Sendable {
    // @unchecked: `door` is only read, to copy it into the first message.
    let door: SendRight
    let kind = "service"
    let adversaryArguments: [String] = []
    var pid: pid_t { getpid() }

    init(door: consuming SendRight) { self.door = door }

    func honestRequest() -> String? { nil }
    func refusals() -> [String: Int]? { nil }

    func firstMessageForAdversary() -> Message {
        var message = Message(id: 0, text: "victim")
        message.attach(door)
        return message
    }
}

/// harbor-peer run as this process's uid, sending to `home` on request.
/// One not stopped (its test threw first) is killed and reaped when released.
final class HonestPeer {
    private var process: ChildProcess?
    let port: SendRight
    let pid: pid_t

    init(home: borrowing ReceiveRight) throws {
        var first = Message(id: 0, text: "serve")
        first.attach(home.makeSendRight())
        let child = try ChildProcess.spawn(executable: builtExecutable("harbor-peer"), initialMessage: first)
        do {
            var hello = try home.receive(timeout: .seconds(30))
            #expect(hello.id == PeerCommand.hello)
            port = try hello.takeSendRight(at: 0)
        } catch {
            reapChild(child.pid, patience: .zero)
            throw error
        }
        pid = child.pid
        process = consume child
    }

    /// Asks it to exit and reaps it (killed if it has not exited within 10 s).
    func stop() {
        try? port.send(Message(id: PeerCommand.exit), timeout: .seconds(5))
        if let child = process.take() { reapChild(child.pid) }
    }

    deinit {
        if let child = process.take() { reapChild(child.pid, patience: .zero) }
    }
}
