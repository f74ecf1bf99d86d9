// Harbor — P10: the name server's requests, in one process (server on its own run-loop thread).
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct ServerTests {
        /// P10: a declared name's port exists before its service: look-ups
        /// succeed at once, messages queue, and the check-in hands over the
        /// receive right with the messages in order.
        @Test func P10_messagesSentBeforeCheckInWaitForTheService() throws {
            try expectNoDescriptorLeak {
                let policy = try BootstrapPolicy(parsing: Array("declare early user=\(geteuid())".utf8))
                let fixture = try InProcessServer(policy: policy)
                defer { fixture.shutDown() }
                let client = try fixture.client()
                let early = try client.lookUp("early")
                for word in ["one", "two", "three"] { try early.send(Message(id: 1, text: word), timeout: .seconds(1)) }
                let listing = try client.list()
                #expect(listing.map(\.state) == [.waiting])
                let port = try client.checkIn("early")
                let texts = try (0..<3).map { _ in try port.receive(timeout: .seconds(2)).text }
                #expect(texts == ["one", "two", "three"])
                #expect(try client.list().map(\.state) == [.active])
            }
        }

        /// P10: a live holder keeps the name (a second check-in is refused);
        /// when its receive right dies, a declared name goes back to the
        /// server and can be checked in again, with messages waiting anew.
        @Test func P10_holderDeathReturnsADeclaredName() throws {
            try expectNoDescriptorLeak {
                let policy = try BootstrapPolicy(parsing: Array("declare svc user=\(geteuid())".utf8))
                let fixture = try InProcessServer(policy: policy)
                defer { fixture.shutDown() }
                let client = try fixture.client()
                var first: ReceiveRight? = try client.checkIn("svc")
                var refused = false
                do { _ = try client.checkIn("svc") } catch BootstrapError.Code.alreadyActive { refused = true }
                #expect(refused)
                let old = try client.lookUp("svc")
                first = nil
                #expect(old.isDead)
                // The holder's session tells the server of the death from its
                // own thread (`gone`), as launchd hears of it by a
                // notification: a look-up before that is answered with the
                // dead right. The name must come back, not at once.
                var found: SendRight?
                #expect(eventually(5) {
                    guard let right = try? client.lookUp("svc"), !right.isDead else { return false }
                    found = right
                    return true
                }, "the declared name goes back to the server once it hears of the death")
                guard let fresh = found else { return }
                #expect(fresh != old)
                try fresh.send(Message(id: 9, text: "while nobody held it"), timeout: .seconds(1))
                let second = try client.checkIn("svc")
                #expect(try second.receive(timeout: .seconds(2)).text == "while nobody held it")
                _ = first
            }
        }

        /// P10: register publishes a send right; the name is refused to a
        /// second registrant, and removed when the registered port dies.
        @Test func P10_registeredNameIsRemovedWhenItsPortDies() throws {
            try expectNoDescriptorLeak {
                let fixture = try InProcessServer()
                defer { fixture.shutDown() }
                let client = try fixture.client()
                var port: ReceiveRight? = ReceiveRight()
                let right = port!.makeSendRight()
                try client.register("dyn", right)
                #expect(try client.lookUp("dyn") == right)
                var inUse = false
                do { try client.register("dyn", ReceiveRight().makeSendRight()) } catch BootstrapError.Code.nameInUse { inUse = true }
                #expect(inUse)
                port = nil
                // The session tells the server from its own thread (above).
                #expect(eventually(5) {
                    do { _ = try client.lookUp("dyn") } catch BootstrapError.Code.notFound { return true } catch { return false }
                    return false
                }, "the registered name is removed once the server hears of the death")
                #expect(try client.list().isEmpty)
                // Unregister: an undeclared check-in can be removed; a missing name cannot.
                let adHoc = try client.checkIn("adhoc")
                try client.unregister("adhoc")
                var missing = false
                do { try client.unregister("adhoc") } catch BootstrapError.Code.notFound { missing = true }
                #expect(missing)
                _ = adHoc
            }
        }

        /// P10: malformed requests get a typed refusal (or are dropped when
        /// they carry no reply right) and the server goes on serving.
        @Test func P10_malformedRequestsAreRefusedAndTheServerGoesOn() throws {
            try expectNoDescriptorLeak {
                let fixture = try InProcessServer()
                defer { fixture.shutDown() }
                let client = try fixture.client()
                let replies = ReceiveRight()
                func ask(_ id: Int32, _ body: [UInt8]) throws -> Int32 {
                    var request = Message(id: id, body: body)
                    request.setReplyRight(replies.makeSendOnceRight())
                    try client.bootstrapPort.send(request, timeout: .seconds(1))
                    return try replies.receive(timeout: .seconds(2)).id
                }
                #expect(try ask(0x7777, []) == BootstrapError.Code.badRequest.rawValue)
                #expect(try ask(0x4842_0001, [0, 1, 2]) == BootstrapError.Code.invalidName.rawValue)
                #expect(try ask(0x4842_0001, [0xFF, 0xFE]) == BootstrapError.Code.invalidName.rawValue)
                #expect(try ask(0x4842_0001, Array(repeating: 0x61, count: 4096)) == BootstrapError.Code.invalidName.rawValue)
                #expect(try ask(0x4842_0003, Array("noright".utf8)) == BootstrapError.Code.badRequest.rawValue)
                try client.bootstrapPort.send(Message(id: 0x4842_0001, text: "no reply right"), timeout: .seconds(1))
                var invalid = false
                do { _ = try client.lookUp("bad name") } catch BootstrapError.Code.invalidName { invalid = true }
                #expect(invalid)
                let held = try client.checkIn("still.serving")
                #expect(try client.list().map(\.name) == ["still.serving"])
                _ = held
            }
        }

        /// P10: a process with no configuration finds the server through
        /// HARBOR_BOOTSTRAP; without it, root uses the system socket.
        @Test func P10_clientsFindTheSocketWithoutConfiguration() {
            let saved = getenv(BootstrapAddress.environmentKey).map { String(cString: $0) }
            setenv(BootstrapAddress.environmentKey, "/tmp/elsewhere.sock", 1)
            #expect(BootstrapAddress.clientPath == "/tmp/elsewhere.sock")
            unsetenv(BootstrapAddress.environmentKey)
            if geteuid() == 0 { #expect(BootstrapAddress.clientPath == "/run/harbor/bootstrap.sock") }
            if let saved { setenv(BootstrapAddress.environmentKey, saved, 1) }
            var unreachable = false
            do { _ = try BootstrapClient(socketPath: "/tmp/harbor-no-such-dir/bootstrap.sock") } catch BootstrapError.Code.unreachable {
                unreachable = true
            } catch {}
            #expect(unreachable)
        }
    }
}
