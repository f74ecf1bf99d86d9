// Harbor — P12: a peer hurts only itself. A stranger (harbor-peer run as
// nobody through setpriv when this process is root, so the kernel gives it
// another uid) misbehaves on purpose against a port of this process, while
// an honest peer (root) keeps working: each limit it goes past is refused
// and counted, the honest peer is unaffected, and this process's
// descriptors and memory come back once the stranger is gone.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Synchronization
import Testing
@testable import HarborPorts
import HarborSystem
@testable import HarborTransport

/// A harbor-peer of another uid that misbehaves on request
/// (Sources/harbor-peer/Misbehaviour.swift). Killed when dropped, so a
/// failing test leaves no stranger behind.
final class Stranger {
    private var process: ChildProcess?
    let port: SendRight
    /// Its uid as the kernel reported it (this process's own when not root).
    let uid: uid_t

    init(home: borrowing ReceiveRight) throws {
        var first = Message(id: 0, text: "serve")
        first.attach(home.makeSendRight())
        let asNobody = geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0
        let command = asNobody
            ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", builtExecutable("harbor-peer")]
            : [builtExecutable("harbor-peer")]
        let child = try ChildProcess.spawn(executable: command[0], arguments: Array(command.dropFirst()),
                                           initialMessage: first)
        do {
            var hello = try home.receive(timeout: .seconds(30))
            #expect(hello.id == PeerCommand.hello)
            port = try hello.takeSendRight(at: 0)
            uid = hello.trailer.sender.uid
        } catch {
            reapChild(child.pid, patience: .zero)
            throw error
        }
        process = consume child
    }

    /// Whether it runs as another uid than this process (else per-uid
    /// limits charge the honest peer too, and the tests say less).
    var isAnotherUid: Bool { uid != geteuid() }

    /// Asks it to misbehave (`PeerCommand.rawFlood`...) against `target`
    /// (default: the port it was started with); returns its account.
    func misbehave(_ command: Int32, _ text: String, on target: SendRight? = nil,
                   timeout: Duration = .seconds(60)) throws -> String {
        var message = Message(id: command, text: text)
        if let target { message.attach(target) }
        return try request(port, message, timeout: timeout).text
    }

    /// Kills it (SIGKILL) and reaps it.
    func kill() {
        guard let process = process.take() else { return }
        reapChild(process.pid, patience: .zero)
    }

    deinit { kill() }
}

/// Sends `message` to `port` with a reply right to a fresh port and waits for the reply.
func request(_ port: SendRight, _ message: consuming Message, timeout: Duration = .seconds(60)) throws -> Message {
    let replies = ReceiveRight()
    message.setReplyRight(replies.makeSendOnceRight())
    try port.send(message)
    return try replies.receive(timeout: timeout)
}

/// This process's resident memory (/proc/self/statm).
func residentBytes() -> Int {
    let fd = open("/proc/self/statm", O_RDONLY)
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = read(fd, &buffer, buffer.count)
    let fields = String(decoding: buffer[0..<max(0, count)], as: UTF8.self).split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Pumps `port`'s connections `times` times without taking a message: each
/// pump reads one packet from each connection that has one.
func pump(_ port: borrowing ReceiveRight, times: Int) throws {
    let transport = try port.core.ensureTransport()
    for _ in 0..<times { transport.pump(into: port.core) }
}

/// Pumps (and takes messages from) `core` on another thread until stopped;
/// the most descriptors this process had open meanwhile.
final class BackgroundReceiver: Sendable {
    private final class Shared: Sendable {
        let stop = Atomic<Bool>(false)
        let received = HarborLock<[Message.Summary]>([])
    }

    private let shared = Shared()
    private let thread: TestThread<Int>
    /// The port, when this receiver takes its messages: `finish` takes what
    /// its last pump queued behind the message it took.
    private let taken: PortCore?

    /// With `taking` false it only pumps: messages stay queued.
    init(_ core: PortCore, taking: Bool = true) {
        let shared = self.shared
        taken = taking ? core : nil
        thread = TestThread {
            var peak = 0
            while !shared.stop.load(ordering: .relaxed) {
                if !taking {
                    _ = try? core.ensureTransport().pump(into: core)
                    usleep(100)
                } else if let content = core.tryDequeue() {
                    shared.received.withLock { $0.append(Message.Summary(content)) }
                } else {
                    usleep(200)
                }
                peak = max(peak, openDescriptorCount())
            }
            return peak
        }
    }

    /// Whether a message `matching` has been received so far.
    func hasReceived(_ matching: (Message.Summary) -> Bool) -> Bool {
        shared.received.withLock { $0.contains(where: matching) }
    }

    /// Stops the thread; the peak descriptor count and what it received.
    /// A pump takes its first message and queues the rest it read, which
    /// the thread would have taken on its next turn: those count too.
    func finish() -> (peak: Int, received: [Message.Summary]) {
        shared.stop.store(true, ordering: .relaxed)
        let peak = thread.join()
        while let content = taken?.tryDequeue() {
            shared.received.withLock { $0.append(Message.Summary(content)) }
        }
        return (peak, shared.received.withLock { $0 })
    }
}

extension Message {
    /// What the tests look at of a message received on another thread.
    struct Summary: Sendable {
        let id: Int32
        let senderUid: uid_t
        let regionBytes: Int

        init(_ content: MessageContent) {
            id = content.id
            senderUid = content.trailer.sender.uid
            regionBytes = content.regions.reduce(0) { $0 + $1.count }
        }
    }
}

@Suite(.serialized, .deadline(.seconds(300)))
struct PeerLimitTests {
    /// 5,000 wait packets, each with a fresh eventfd, at a full queue (so
    /// the receiver must keep its waiters): it holds one per connection
    /// (the latest), and none once the stranger is gone.
    @Test func P12_waitPacketsHoldOneDescriptorPerConnection() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            try home.setQueueLimit(1)
            let honest = try Peer(home: home)
            let stranger = try Stranger(home: home)
            #expect(try request(honest.port, Message(id: PeerCommand.burst, text: "1")).text == "sent")
            let before = openDescriptorCount()
            let receiver = BackgroundReceiver(home.core, taking: false)
            let account = try stranger.misbehave(PeerCommand.rawWaits, "5000")
            #expect(account == "sent=5000")
            let echo = try honest.request(Message(id: PeerCommand.echo, text: "still here"))
            #expect(echo.text == "still here")
            let (peak, _) = receiver.finish()
            try pump(home, times: 5000)  // whatever wait packets are still in the socket
            // Before: one descriptor per wait packet (5,000); a margin for
            // whatever other tests open meanwhile.
            #expect(peak <= before + 64, "held \(peak - before) descriptors for 5,000 wait packets")
            #expect(openDescriptorCount() <= before + 1)
            #expect(home.status.queuedMessages == 1, "the queue stayed full throughout")
            _ = try home.receive(timeout: .seconds(5))
            stranger.kill()
            try pump(home, times: 10)
            #expect(openDescriptorCount() <= before, "the stranger's connection and its waiter are closed")
            honest.stop()
        }
    }

    /// A stranger writes the slot counter every sender maps (full, full
    /// again and again, slots hoarded, the page overwritten): the honest
    /// peer's 30 messages all
    /// arrive, each granted a slot by the receiver's own count, and the
    /// queue stays within its limit.
    @Test(arguments: ["full", "full-loop", "hoard", "magic"])
    func P12_aSlotCounterWrittenByOneSenderStallsNoOther(_ how: String) throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            try home.setQueueLimit(3)
            let honest = try Peer(home: home)
            let stranger = try Stranger(home: home)
            let account = try stranger.misbehave(PeerCommand.scribble, how)
            #expect(account == "written" || account.hasPrefix("taken="))
            let port = honest.port
            let burst = TestThread {
                (try? request(port, Message(id: PeerCommand.burst, text: "30"), timeout: .seconds(15)).text) ?? "failed"
            }
            var ids: [Int32] = []
            var deepest = 0
            while ids.count < 30, let message = try? home.receive(timeout: .seconds(5)) {
                deepest = max(deepest, home.status.queuedMessages)
                ids.append(message.id)
            }
            #expect(burst.join() == "sent")
            #expect(ids == Array(0..<30), "every honest message arrived, in order")
            // A granted slot may race one in flight, and a writer in a loop
            // writes old values back over the receiver's repairs, which can
            // show room: a message that then finds the queue full waits
            // beside it, parked (HarborPorts' Admission/ParkedMessages.swift).
            #expect(deepest <= 3, "the queue stayed within its limit")
            if how == "magic" {
                // A process that adopts the overwritten counter still sends.
                let newcomer = try Peer(home: home)
                #expect(try newcomer.request(Message(id: PeerCommand.echo, text: "new")).text == "new")
                newcomer.stop()
            }
            stranger.kill()
            honest.kill()
        }
    }

    /// 400 counted messages sent without taking a slot: the queue takes its
    /// limit, the next message is parked and the stranger's connection is
    /// read no further until a slot frees (HarborPorts' Admission/ParkedMessages.swift):
    /// the rest waits in its own socket. Nothing is refused, the shared
    /// counter shows no room the queue does not have, the queue never passes
    /// its limit, and the honest peer's messages all arrive, in order,
    /// taking turns with the stranger's, which all arrive too.
    @Test func P12_aSenderIgnoringTheLimitStallsOnlyItsOwnConnection() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            try home.setQueueLimit(5)
            let honest = try Peer(home: home)
            let stranger = try Stranger(home: home)
            #expect(try stranger.misbehave(PeerCommand.rawFlood, "400") == "sent=400")
            let refusals = WireRejections.total
            try pump(home, times: 450)
            #expect(home.status.queuedMessages == 5, "the queue holds its limit")
            let slots = try home.core.ensureTransport().slots
            #expect(slots.counter.parked == 1, "one message parked, its connection read no further")
            #expect(slots.free <= -1, "the counter shows no room the queue does not have")
            let port = honest.port
            let burst = TestThread { (try? request(port, Message(id: PeerCommand.burst, text: "10")).text) ?? "failed" }
            var fromStranger = 0, fromHonest: [Int32] = [], deepest = 0
            while fromHonest.count < 10 || fromStranger < 400, let message = try? home.receive(timeout: .seconds(10)) {
                deepest = max(deepest, home.status.queuedMessages)
                if message.trailer.sender.pid == honest.pid { fromHonest.append(message.id) } else { fromStranger += 1 }
            }
            #expect(burst.join() == "sent")
            #expect(fromHonest == Array(0..<10))
            #expect(fromStranger == 400, "every message the stranger sent arrives, as slots free")
            #expect(deepest <= 5, "the queue stayed within its limit")
            #expect(WireRejections.total == refusals, "nothing refused")
            #expect(slots.counter.parked == 0)
            stranger.kill()
            honest.stop()
        }
    }

    /// Unfinished fragmented messages: one of 200 MiB (190 sent) is held;
    /// a second from the same uid on another connection, and one declaring
    /// more than a connection may carry, are refused; the honest peer's
    /// payload arrives; the memory comes back when the stranger dies.
    @Test func P12_unfinishedFragmentedMessagesAreBoundedPerUid() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight(), other = ReceiveRight()
            let honest = try Peer(home: home)
            let stranger = try Stranger(home: home)
            _ = try other.core.ensureTransport()
            let fds = openDescriptorCount(), resident = residentBytes()
            let uid = UInt32(stranger.uid)
            let receiver = BackgroundReceiver(home.core)
            let account = try stranger.misbehave(PeerCommand.rawFragment, "\(200 << 20) \(190 << 20)")
            #expect(account == "sent=\(190 << 20)")
            #expect(PartialCharge.held(by: uid) == 200 << 20)
            let refusals = WireRejections.count(.overLimit)
            _ = try stranger.misbehave(PeerCommand.rawFragment, "\(200 << 20) 0", on: other.makeSendRight())
            _ = try stranger.misbehave(PeerCommand.rawFragment, "\(300 << 20) 0", on: other.makeSendRight())
            try pump(other, times: 4)
            #expect(WireRejections.count(.overLimit) - refusals == 2, "past the uid's and the connection's limits")
            #expect(try honest.request(Message(id: PeerCommand.payload, text: "\(1 << 20)")).text == "sent=1")
            let during = residentBytes()
            #expect(during <= resident + (200 << 20) + (32 << 20), "one unfinished message is held, not three")
            stranger.kill()
            // The payload was sent ("sent=1") but may still be on its way in:
            // its last packets are read by the receiving thread, maybe in a
            // pump after the one that read the stranger's end. Wait for it
            // too, rather than stop the receiver as soon as the memory is back.
            let isPayload = { (message: Message.Summary) in
                message.id == PeerCommand.payload && message.regionBytes == 1 << 20
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while PartialCharge.held(by: uid) > 0 || residentBytes() > resident + (16 << 20)
                    || !receiver.hasReceived(isPayload),
                  ContinuousClock.now < deadline {
                usleep(20_000)
            }
            let (_, received) = receiver.finish()
            #expect(received.contains(where: isPayload), "the honest peer's payload arrives")
            try pump(other, times: 4)
            #expect(PartialCharge.held(by: uid) == 0)
            #expect(residentBytes() <= resident + (16 << 20), "resident \(during >> 20) MiB during, back after")
            #expect(openDescriptorCount() <= fds)
            honest.stop()
        }
    }

    /// Sealed regions: a uid's queued messages hold at most
    /// `queuedRegionBytesPerUid` (two of 512 MiB, not three), and one region
    /// over `regionBytes` is refused unmapped; the honest peer's region is
    /// still taken.
    @Test func P12_regionBytesQueuedPerUidAreBounded() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            try home.setQueueLimit(10)
            let honest = try Peer(home: home)
            let stranger = try Stranger(home: home)
            let fds = openDescriptorCount()
            let refusals = WireRejections.count(.overLimit)
            #expect(try stranger.misbehave(PeerCommand.regions, "3 \(512 << 20)") == "sent=3")
            #expect(try stranger.misbehave(PeerCommand.regions, "1 \(2 << 30)") == "sent=1")
            try pump(home, times: 6)
            #expect(WireRejections.count(.overLimit) - refusals == 2)
            #expect(home.status.queuedMessages == 2)
            if stranger.isAnotherUid {
                #expect(try honest.request(Message(id: PeerCommand.regions, text: "1 \(512 << 20)")).text == "sent=1")
                try pump(home, times: 2)
                #expect(home.status.queuedMessages == 3, "another uid's region is its own business")
            }
            while let message = home.tryReceive() { _ = message }
            stranger.kill()
            try pump(home, times: 4)
            #expect(openDescriptorCount() <= fds)
            honest.stop()
        }
    }

    /// Rights: a uid's queued messages hold at most `queuedDescriptorsPerUid`
    /// descriptors (a send right counts two); past that its messages are
    /// refused, and everything comes back once they are received.
    @Test func P12_descriptorsQueuedPerUidAreBounded() throws {
        // The limit is a share of RLIMIT_NOFILE: hold it at 4,096 meanwhile
        // (a 1,024-descriptor share), whatever other tests raised it to.
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var lowered = saved
        lowered.rlim_cur = min(saved.rlim_cur, 4096)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let copies = 60
            let fitting = PeerLimits.queuedDescriptorsPerUid / (2 * copies)
            let messages = fitting + 2
            try home.setQueueLimit(min(1024, messages + 1))
            let stranger = try Stranger(home: home)
            let fds = openDescriptorCount()
            let refusals = WireRejections.count(.overLimit)
            let account = try stranger.misbehave(PeerCommand.rights, "\(messages) \(copies)")
            #expect(account == "sent=\(messages)")
            try pump(home, times: messages + 2)
            #expect(WireRejections.count(.overLimit) - refusals == messages - fitting)
            #expect(home.status.queuedMessages == fitting)
            while let message = home.tryReceive() { _ = message }
            stranger.kill()
            try pump(home, times: 4)
            #expect(openDescriptorCount() <= fds)
        }
    }

    /// Carried files (C07): each counts as one of the uid's queued
    /// descriptors, as a region's memfd does; past its share its messages
    /// are refused (`overLimit`), and every file comes back, closed, once
    /// the messages are received and dropped.
    @Test func C07_P12_carriedFilesAreChargedToTheSendersUidAndBounded() throws {
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var lowered = saved
        lowered.rlim_cur = min(saved.rlim_cur, 4096)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let files = Message.maximumCarriedFiles
            let fitting = PeerLimits.queuedDescriptorsPerUid / files
            let messages = fitting + 2
            try home.setQueueLimit(min(1024, messages + 1))
            let stranger = try Stranger(home: home)
            let fds = openDescriptorCount()
            let refusals = WireRejections.count(.overLimit)
            #expect(try stranger.misbehave(PeerCommand.files, "\(messages) \(files)") == "sent=\(messages)")
            try pump(home, times: messages + 2)
            #expect(WireRejections.count(.overLimit) - refusals == messages - fitting,
                    "past the uid's share of descriptors, its messages are refused")
            #expect(home.status.queuedMessages == fitting)
            #expect(openDescriptorCount() - fds >= fitting * files, "the queued files are held here meanwhile")
            var received = 0
            while let message = home.tryReceive() {
                received += message.carriedFileCount
            }
            #expect(received == fitting * files)
            stranger.kill()
            try pump(home, times: 4)
            #expect(openDescriptorCount() <= fds, "every file closed with its message, refused or received")
        }
    }
}
