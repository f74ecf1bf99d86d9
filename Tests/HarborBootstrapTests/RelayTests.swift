// Harbor — whoever relays is seen: a message that waited for its service keeps its real sender, and
// look-ups need nothing from the holder (P10, P11).
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite(.deadline(.seconds(120))) struct RelayTests {
        /// P11: uid `nobody` sends to a shared declared name before its
        /// service checks in; the message waits in harbord, which moves the
        /// port to root's service at check-in. The service receives it with
        /// `sender` = nobody (harbord's word, taken because harbord is the
        /// name server this process connected to, as the kernel said on the
        /// welcome), `relayedBy` = harbord, and the claim beside it; not with
        /// harbord (or root) as its sender, as launchd keeps the audit trailer.
        @Test(.requiresRoot("to send as nobody")) func P11_aMessageQueuedBeforeCheckInKeepsItsRealSender() throws {
            let harbord = HarbordProcess(policy: "shared early owner=0\n")
            #expect(harbord.waitUntilReady())
            let early = harbord.harbor(["send", "early", "from nobody"], asNobody: true)
            #expect(early.exitCode() == 0, "\(early.stderrSoFar)")
            let client = try harbord.client()
            let inbox = try client.checkIn("early")
            let message = try inbox.receive(timeout: .seconds(10))
            #expect(message.text == "from nobody")
            #expect(message.trailer.sender.uid == 65534, "the sender a service may act on: \(message.trailer.sender)")
            #expect(message.trailer.sender.pid == early.pid)
            #expect(message.trailer.relayedBy?.pid == harbord.child.pid, "relayed by harbord")
            #expect(message.trailer.claimedOriginalSender?.uid == 65534)
            #expect(RelayTrust.trusts(try #require(message.trailer.relayedBy)))
            #expect(harbord.stop() == 0)
        }

        /// P11: a relay that is not the trusted name server is the sender of
        /// what it relays: a process running as nobody moves a port holding
        /// root's queued message here; the message shows nobody as sender,
        /// nobody as relay and root only as nobody's claim.
        @Test(.requiresRoot("to run the relay as nobody")) func P11_anUntrustedRelayIsTheSenderOfWhatItRelays() throws {
            let fixture = try InProcessServer()
            defer { fixture.shutDown() }
            let relay = try NobodyPeer(directory: fixture.directory)
            let moved = ReceiveRight()
            let back = ReceiveRight()
            moved.requestPortDestroyedNotification(to: back.makeSendOnceRight())
            try moved.makeSendRight().send(Message(id: 1, text: "queued by root"))
            try moved.makeSendRight().send(Message(id: 2, text: "second"))
            let returned = try relay.relayHome(moved, back: back)
            let message = try returned.receive(timeout: .seconds(5))
            #expect(message.text == "second")
            #expect(message.trailer.sender.uid == 65534)
            #expect(message.trailer.relayedBy?.uid == 65534)
            #expect(message.trailer.claimedOriginalSender?.uid == 0)
        }

        /// P10: a look-up needs nothing from the holder: with the holding
        /// process stopped (SIGSTOP), look-ups of its name still return a
        /// send right at once, and sends queue by the port's rules.
        @Test func P10_aLookUpOfAStoppedHoldersNameSucceeds() throws {
            let harbord = HarbordProcess()
            #expect(harbord.waitUntilReady())
            let holder = harbord.harbor(["hold", "frozen"])
            #expect(holder.waitForStdout("holding 1 name", before: .now + .seconds(30)), "\(holder.stderrSoFar)")
            kill(holder.pid, SIGSTOP)
            defer { kill(holder.pid, SIGCONT) }
            let client = try BootstrapClient(socketPath: harbord.socketPath, timeout: .seconds(2))
            for _ in 0..<3 {
                let right = try client.lookUp("frozen")
                try right.send(Message(id: 1, text: "waits for a stopped holder"), timeout: .zero)
            }
            let lookUp = harbord.harbor(["lookup", "frozen"])
            #expect(lookUp.exitCode() == 0, "\(lookUp.stderrSoFar)")
            kill(holder.pid, SIGCONT)
            kill(holder.pid, SIGTERM)
            _ = holder.waitForExit()
            #expect(harbord.stop() == 0)
        }
    }
}
