// Harbor — registered reply rights: a client's requests carry no reply right, and a handle is its process's alone.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing
@testable import HarborBootstrap

extension BootstrapTests {
    @Suite struct ReplyRegistrationTests {
        /// The handle the server gives for `replies`' send right.
        private static func register(_ replies: borrowing ReceiveRight, at bootstrap: SendRight) throws -> UInt64 {
            var request = Message(id: BootstrapRequest.registerReplies)
            request.setReplyRight(replies.makeSendRight())
            try bootstrap.send(request, timeout: .seconds(2))
            let answer = try replies.receive(timeout: .seconds(5))
            #expect(answer.id == 0, "registration refused: \(answer.text)")
            #expect(answer.body.count == 8)
            return try #require(BootstrapRequest.handle(endingThe: answer.body))
        }

        /// A look-up that names `handle` and carries no reply right.
        private static func lookUp(_ name: String, via handle: UInt64) -> Message {
            Message(id: BootstrapRequest.viaRegisteredReply(BootstrapRequest.lookUp),
                    body: Array(name.utf8) + BootstrapRequest.handleBytes(handle))
        }

        /// P11: a registered reply right answers only the process it leads
        /// to. Root registers its reply port and looks a private name up by
        /// the handle alone; a process running as `nobody`, given root's
        /// bootstrap right and the handle, sends the same request: the
        /// kernel says nobody sent it, so it gets nothing into root's port
        /// (the server would be speaking for nobody there, and nobody could
        /// make root's next look-up read an answer it did not ask for).
        /// Root's own requests are answered before and after.
        @Test(.requiresRoot("to run the other process as nobody"), .deadline(.seconds(60)))
        func P11_aRegisteredReplyRightAnswersOnlyTheProcessItLeadsTo() throws {
            try expectNoDescriptorLeak { () throws in
                let fixture = try InProcessServer()
                defer { fixture.shutDown() }
                let root = try fixture.client()
                let secret = try root.checkIn("root.secret")
                let replies = ReceiveRight()
                let handle = try Self.register(replies, at: root.bootstrapPort)
                #expect(try Self.register(replies, at: root.bootstrapPort) == handle, "one registration per port")

                try root.bootstrapPort.send(Self.lookUp("root.secret", via: handle), timeout: .seconds(2))
                var found = try replies.receive(timeout: .seconds(5))
                #expect(found.id == 0)
                _ = try found.takeSendRight(at: 0)

                let other = try NobodyPeer(directory: fixture.directory)
                defer { other.stop() }
                let send = Self.lookUp("root.secret", via: handle)
                var forwarded = Message(id: PeerCommand.sendTo, body: PeerCommand.sendToBody(id: send.id, body: send.body))
                forwarded.attach(root.bootstrapPort)
                #expect(try other.request(forwarded).text == "sent")
                // The server has handled it once it says it dropped it (or once an answer is queued here).
                #expect(eventually(5) {
                    replies.status.queuedMessages > 0 || fixture.log.all.contains { $0.contains("from pid \(other.pid)") }
                }, "the server did not handle nobody's request: \(fixture.log.all)")
                #expect(replies.status.queuedMessages == 0, "nobody's request was answered into root's port")

                try root.bootstrapPort.send(Self.lookUp("no.such.name", via: handle), timeout: .seconds(2))
                #expect(try replies.receive(timeout: .seconds(5)).id == BootstrapError.Code.notFound.rawValue)
                _ = secret
            }
        }

        /// P12: registered reply rights are the uid's: each is two of the
        /// server's descriptors charged to it, at most
        /// `clientsPerUser` of them, and each is let go (with its charge)
        /// when its port dies.
        @Test(.deadline(.seconds(60))) func P12_registeredReplyRightsAreChargedBoundedAndReleasedWithTheirPorts() throws {
            try expectNoDescriptorLeak { () throws in
                var quotas = BootstrapQuotas()
                quotas.clientsPerUser = 4
                let fixture = try InProcessServer(quotas: quotas)
                defer { fixture.shutDown() }
                let client = try fixture.client()
                _ = try client.list()  // the client's own registration: one of the four
                let uid = geteuid()
                func registered() throws -> Int { try fixture.onLoop { $0.charges[uid]?.replyRights ?? 0 } }
                #expect(try registered() == 1)
                var ports: [HeldName] = []
                for _ in 0..<3 {
                    let held = HeldName(ReceiveRight())
                    _ = try Self.register(held.port, at: client.bootstrapPort)
                    ports.append(held)
                }
                #expect(try registered() == 4)
                let fifth = ReceiveRight()
                var request = Message(id: BootstrapRequest.registerReplies)
                request.setReplyRight(fifth.makeSendRight())
                try client.bootstrapPort.send(request, timeout: .seconds(2))
                #expect(try fifth.receive(timeout: .seconds(5)).id == BootstrapError.Code.overQuota.rawValue)
                #expect(try registered() == 4)

                ports.removeAll()  // three ports die: their registrations go
                #expect(eventually { (try? registered()) == 1 }, "registrations left: \((try? registered()) ?? -1)")
                _ = try Self.register(fifth, at: client.bootstrapPort)
                #expect(try registered() == 2)
            }
        }

        /// P11: a client takes answers only from its server (the kernel's
        /// word on who sent them): two messages another process put in its
        /// reply port first (a process asked by `harbor ports` once held a
        /// way in) are passed over, and the look-up gets harbord's answer.
        @Test(.deadline(.seconds(60))) func P11_aClientTakesAnswersOnlyFromItsServer() throws {
            let harbord = HarbordProcess()
            #expect(harbord.waitUntilReady())
            let link = try BootstrapLink(socketPath: harbord.socketPath, timeout: .seconds(5))
            var replies = BootstrapReplies()
            for text in ["not from the server", "nor this"] {
                try replies.right.send(Message(id: 0, text: text), timeout: .seconds(1))
            }
            var thrown: BootstrapError.Code?
            do {
                let answer = try link.exchange(BootstrapRequest.lookUp, body: Array("no.such.name".utf8), carrying: [],
                                               replies: &replies)
                Issue.record("a stray message was taken as the answer: \(answer.text)")
            } catch {
                thrown = error.code
            }
            #expect(thrown == .notFound)
            #expect(replies.registration?.handle != nil, "the registration's answer was not the stray message")
            #expect(harbord.stop() == 0)
        }

        /// P10: a client registers its reply right once and its requests
        /// then carry none: with its registration gone from the server, its
        /// next request cannot be answered and times out; the client then
        /// makes a new reply port, registers it, and is answered again.
        @Test(.deadline(.seconds(60))) func P10_aClientsRequestsCarryNoReplyRightOnceItIsRegistered() throws {
            try expectNoDescriptorLeak { () throws in
                let fixture = try InProcessServer()
                defer { fixture.shutDown() }
                let client = try BootstrapClient(socketPath: fixture.socketPath, timeout: .milliseconds(500))
                let held = try client.checkIn("mine")
                _ = try client.lookUp("mine")
                let uid = geteuid()
                #expect(try fixture.onLoop { $0.charges[uid]?.replyRights ?? 0 } == 1)
                // The registration goes as when its port dies.
                try fixture.onLoop { server in
                    for port in server.replyRegistrations.ports { server.replyPortDied(port) }
                }
                #expect(try fixture.onLoop { $0.charges[uid]?.replyRights ?? 0 } == 0)

                var timedOut = false
                do { _ = try client.lookUp("mine") } catch BootstrapError.Code.timedOut { timedOut = true }
                #expect(timedOut, "a request was answered without a registration: it carried a reply right")
                _ = try client.lookUp("mine")
                #expect(try fixture.onLoop { $0.charges[uid]?.replyRights ?? 0 } == 1, "the new reply port is registered")
                _ = held
            }
        }
    }
}
