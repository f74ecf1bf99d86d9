// Harbor — Porting.md's NSPort, NSThread and small CF-form snippets, run, with what they must print.
import HarborRunLoop
import HarborTestSupport
import Testing

extension PortingGuideTests {
    @Suite struct NSPortSnippetTests {
        @Test func RL01_RL02_RL03_RL07_cfForms() {
            // The snippet asks for Loop.main, made once per process and kept:
            // made here first, so the descriptor check does not count it.
            _ = Loop.main
            #expect(run(Snippets.cfForms) == [
                "on the main thread: false",
                "mode string: UITrackingRunLoopMode",
                "repeats: true, in tracking: true",
                "fires within a minute: true",
                "the fire after next: 60.0 seconds later",
                "in tracking: false, valid: true",
            ])
        }

        @Test func RL16_RL17_detachThread() {
            #expect(run(Snippets.detachThread) == ["work: arg on detached", "performed on background"])
        }

        @Test func RL09_P02_P03_portMessage() {
            #expect(run(Snippets.portMessage) == ["answer 42: data, 1 port, alive"])
        }

        @Test func P11_ownPortAgain() {
            #expect(run(Snippets.ownPortAgain) == ["found my own source: true, same port: true"])
        }

        /// The NSMachPort demo completes its three rounds, each side's port on its own thread's loop.
        @Test func RL09_RL17_machPortDemoCompletesThreeRounds() {
            #expect(run(Snippets.machPortDemo) == [
                "main: msgid 100, check in",
                "worker: msgid 1, round 1",
                "main: msgid 1, reply to round 1",
                "worker: msgid 2, round 2",
                "main: msgid 2, reply to round 2",
                "worker: msgid 3, round 3",
                "main: msgid 3, reply to round 3",
                "worker: msgid 999, exit",
                "worker finished: true",
            ])
        }

        /// NextBSD's bootstrap server and client: check in, look up, ask, and the answer comes back.
        @Test func P10_P02_nextBSDBootstrapPair() throws {
            let printed = try expectNoDescriptorLeak { () throws -> [String] in
                let server = try NameServer()
                defer { server.shutDown() }
                let path = server.socketPath
                return run(checkingDescriptors: false) { print in try Snippets.nextBSDBootstrap(socketPath: path, print: print) }
            }
            #expect(printed == ["server: received message: body=hello", "client: sent message, reply body=hello buddy"])
        }
    }
}
