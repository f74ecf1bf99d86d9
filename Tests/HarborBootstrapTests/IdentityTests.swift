// Harbor — P11 at the name server: every decision rests on the kernel-verified sender, never a relay's claim.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborBootstrap
import HarborSystem

extension BootstrapTests {
    @Suite struct IdentityTests {
        /// P11: root queues a look-up, a listing and a check-in on a port, the
        /// port's receive right moves to a process running as `nobody`, which
        /// reads them into its queue and hands the port back (a port-destroyed
        /// hand-off). The requests are relayed: the kernel says `nobody`
        /// delivered them, `nobody` claims root sent them, and `nobody` is no
        /// name server this process trusts, so each is `nobody`'s. Their reply
        /// rights lead to root's process, not `nobody`'s: the name server
        /// answers none of them (it would be speaking for `nobody` into
        /// another process's port), so root's private name is neither found
        /// nor listed, and root's scope gets no check-in.
        @Test(.requiresRoot("to run the relay as nobody"), .deadline(.seconds(60)))
        func P11_aRequestRelayedInAMovedReceiveRightIsNobodysAndGetsNoAnswerInSomeoneElsesPort() throws {
            try expectNoDescriptorLeak { () throws in
                let fixture = try InProcessServer(policy: BootstrapPolicy(parsing: Array("shared common owner=0\n".utf8)))
                defer { fixture.shutDown() }
                let root = try fixture.client()
                let secret = try root.checkIn("root.secret")
                let relay = try NobodyPeer(directory: fixture.directory)

                // A port of root's, with requests queued by root, moved to nobody.
                let moved = ReceiveRight()
                let back = ReceiveRight()
                moved.requestPortDestroyedNotification(to: back.makeSendOnceRight())
                let toMoved = moved.makeSendRight()
                let replies = ReceiveRight()
                let session = ReceiveRight()  // the check-in's session right: a live port of root's
                try toMoved.send(Message(id: 1, text: "first, read by receiveKept"))
                for (id, body) in [(BootstrapRequest.lookUp, "root.secret"), (BootstrapRequest.list, ""),
                                   (BootstrapRequest.checkIn, "landed")] {
                    var request = Message(id: id, text: body)
                    request.setReplyRight(replies.makeSendOnceRight())
                    if id == BootstrapRequest.checkIn { request.attach(session.makeSendRight()) }
                    try toMoved.send(request)
                }
                // Queued here, then moved with the port: nobody's process holds
                // them in its queue (a pump there may stop reading ahead at a
                // message with rights, so sending after the move would leave
                // them on the connection, where they stay root's own).
                let returned = try relay.relayHome(moved, back: back)

                for _ in 0..<3 {
                    let request = try returned.receive(timeout: .seconds(5))
                    #expect(request.trailer.relayedBy?.uid == 65534, "the kernel's word: nobody relayed it")
                    #expect(request.trailer.sender.uid == 65534, "an untrusted relay is the sender")
                    #expect(request.trailer.claimedOriginalSender?.uid == 0, "nobody's claim: root sent it")
                    try fixture.handle(request)
                    // The reply right dies unused: its port hears a send-once notification, not an answer.
                    let answer = try replies.receive(timeout: .seconds(5))
                    #expect(answer.notification == .sendOnce(port: replies.name), "answered: \(answer.id) \(answer.text)")
                }
                #expect(try root.list().map(\.name) == ["common", "root.secret"], "root's scope got nobody's check-in")
                _ = secret
                _ = session
            }
        }
    }
}

/// A harbor-peer process running as `nobody` (65534), from a copy nobody can read.
final class NobodyPeer {
    let port: SendRight
    let pid: pid_t
    private var process: ChildProcess?

    init(directory: TemporaryDirectory) throws {
        let copy = directory.copy(builtExecutable("harbor-peer"), as: "harbor-peer")
        let home = ReceiveRight()
        var first = Message(id: 0, text: "serve")
        first.attach(home.makeSendRight())
        let child = try ChildProcess.spawn(
            executable: "/usr/bin/setpriv", arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", copy],
            initialMessage: first)
        do {
            var hello = try home.receive(timeout: .seconds(30))
            #expect(hello.id == PeerCommand.hello)
            #expect(hello.trailer.sender.uid == 65534)
            port = try hello.takeSendRight(at: 0)
        } catch {
            reapChild(child.pid, patience: .zero)
            throw error
        }
        pid = child.pid
        process = .some(child)
    }

    /// Sends `message` and waits for the reply.
    func request(_ message: consuming Message) throws -> Message {
        let replies = ReceiveRight()
        message.setReplyRight(replies.makeSendOnceRight())
        try port.send(message, timeout: .seconds(10))
        return try replies.receive(timeout: .seconds(30))
    }

    /// Makes nobody relay `moved`'s queue home: it keeps the port, receives
    /// once (reading the rest into its queue) and exits, and the port comes
    /// back through its port-destroyed request to `back`.
    func relayHome(_ moved: consuming ReceiveRight, back: borrowing ReceiveRight) throws -> ReceiveRight {
        var keep = Message(id: PeerCommand.keep)
        keep.attach(moved)
        #expect(try request(keep).text == "kept")
        #expect(try request(Message(id: PeerCommand.receiveKept, text: "5000")).text == "#1")
        stop()
        var notice = try back.receive(timeout: .seconds(10))
        return try notice.takeReceiveRight(at: 0)
    }

    /// Asks it to exit (it lets go of what it keeps) and reaps it (killed
    /// if it has not exited within 10 s).
    func stop() {
        try? port.send(Message(id: PeerCommand.exit), timeout: .seconds(5))
        if let child = process.take() { reapChild(child.pid) }
    }

    deinit {
        if let child = process.take() { reapChild(child.pid, patience: .zero) }
    }
}

extension InProcessServer {
    /// Hands `request` to the server on its loop's thread, as if it had
    /// arrived on a bootstrap port.
    func handle(_ request: consuming Message) throws {
        let box = MessageBox(request)
        let server = self.server
        try worker.performAndWait {
            if let message = box.take() { server.handle(message) }
        }
    }
}

/// Carries one message to another thread.
final class MessageBox: Sendable {
    private let message: HarborLock<Message?>
    init(_ message: consuming Message) { self.message = HarborLock(.some(message)) }
    func take() -> Message? { message.withLock { $0.take() } }
}
