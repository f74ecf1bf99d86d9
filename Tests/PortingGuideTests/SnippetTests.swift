// Harbor — every Harbor snippet of Docs/Porting.md, run, with what it must print.
import Glibc
import HarborBootstrap
import HarborRunLoop
import HarborTestSupport
import Testing

extension PortingGuideTests {
    @Suite struct SnippetTests {
        @Test func RL01_RL11_RL16_loopsAndThreads() {
            #expect(run(Snippets.loopsAndThreads) == [
                "executing before start: false",
                "performed on subThread",
                "on subThread: isMain false, ran: true",
                "finished: true",
            ])
        }

        @Test func RL05_RL06_RL08_runInMode() {
            #expect(run(Snippets.runInMode) == [
                "empty mode: false",
                "source0 performed",
                "CFRunLoopRunInMode(…, 10, true): handledSource",
                "CFRunLoopRunInMode(…, 0.01, false): timedOut",
                "after invalidate: finished",
            ])
        }

        @Test func RL06_RL12_skeletonThreadMain() {
            #expect(run(Snippets.skeletonThreadMain) == ["source handled", "handled 1, then done"])
        }

        @Test func RL17_permanentThread() {
            #expect(run(Snippets.permanentThread) == [
                "request started on AFNetworking", "waited for AFNetworking", "after stop: loop terminated",
            ])
        }

        @Test func RL02_RL04_modes() {
            #expect(run(Snippets.modes) == [
                "common: [default]",
                "common: [default, UITrackingRunLoopMode]",
                "in tracking: true",
                "handled in UITrackingRunLoopMode",
                "modes: [\"UITrackingRunLoopMode\", \"default\"]",
            ])
        }

        @Test func RL07_timers() {
            let printed = run(Snippets.timers)
            #expect(printed.prefix(2) == ["fire date kept: true", "the mode's next fire is the ticker's: true"])
            // The ticker's third tick and the moved timer fall due together (at 30 ms): either may come first.
            #expect(printed.filter { $0.hasPrefix("tick") } == ["tick 1", "tick 2", "tick 3"])
            #expect(printed.contains("moved timer fired"))
            #expect(printed.last == "valid: false false")
            #expect(printed.count == 7, "\(printed)")
        }

        @Test func RL07_RL06_foundationForms() {
            #expect(run(Snippets.foundationForms) == [
                "fireDate reads back: true, timeInterval 0.0",
                "limitDate is the timer's: true",
                "timer fired",
                "performed after 0.001 s",
                "run(mode:before:) true",
                "then false",
            ])
        }

        @Test func RL10_observers() {
            #expect(run(Snippets.observers) == [
                "push pool",
                "once, still valid inside its callout: true",
                "pop pool (beforeWaiting)",
                "timer",
                "pop pool (exit)",
                "once valid after: false",
            ])
        }

        @Test func RL11_perform() {
            #expect(run(Snippets.perform) == [
                "block in default", "delayed perform", "on worker", "waited on worker",
            ])
        }

        @Test func P01_P03_P04_machMessages() {
            #expect(run(Snippets.machMessages) == [
                "msgh_id 100: hello, seqno 1", "nothing waiting", "queue full: message 2 given back",
            ])
        }

        @Test func P02_RL09_machRequestReply() {
            #expect(run(Snippets.machRequestReply) == ["reply 107: pong"])
        }

        @Test func P06_machNotifications() {
            #expect(run(Snippets.machNotifications) == ["no senders: true", "dead name: true, client.isDead true"])
        }

        @Test func RL09_portSource() {
            #expect(run(Snippets.portSource) == ["handleMachMessage: 1 one", "handleMachMessage: 2 two", "run returned"])
        }

        /// X01: Apple's Swift XPC sample, with only its import changed,
        /// serves and answers a session (its `XPCListener` and `XPCSession`
        /// find the name server as any process does: `HARBOR_BOOTSTRAP`).
        @Test func X01_applesSwiftXPCSampleRunsWithOnlyItsImportChanged() throws {
            let server = try NameServer()
            defer { server.shutDown() }
            setenv(BootstrapAddress.environmentKey, server.socketPath, 1)
            defer { unsetenv(BootstrapAddress.environmentKey) }
            let printed = run(checkingDescriptors: false) { print in try Snippets.appleXPCSample(print: print) }
            #expect(printed == ["Received response with result: 42"])
        }

        @Test func P10_bootstrap() throws {
            // The server's side of the connection lives until it hears the
            // client go, so the descriptor check spans the server's life.
            let printed = try expectNoDescriptorLeak { () throws -> [String] in
                let server = try NameServer()
                defer { server.shutDown() }
                let path = server.socketPath
                return run(checkingDescriptors: false) { print in try Snippets.bootstrap(socketPath: path, print: print) }
            }
            #expect(printed == ["the checked-in port got: hello", "missing: not found"])
        }
    }
}

/// A name server in this process, on its own run-loop thread, at a socket in a fresh directory.
final class NameServer {
    let directory: String
    let worker = LoopWorker(name: "porting.harbord")
    let server: BootstrapServer
    var socketPath: String { directory + "/bootstrap.sock" }

    init() throws {
        var template = Array("/tmp/harbor-porting-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        server = try BootstrapServer(endpoint: .path(directory + "/bootstrap.sock"))
        let server = self.server
        let loop = worker.loop
        try worker.performAndWait { try? server.start(on: loop) }
    }

    func shutDown() {
        let server = self.server
        try? worker.performAndWait { server.stop() }
        worker.stop()
        unlink(socketPath)
        rmdir(directory)
    }
}
