// HarborXPC tests — interfaces and tools: `harbor introspect` and `harbor call` against a real listener (X17, X18).
import Glibc
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

/// How a run of the `harbor` tool ended.
struct ToolRun: CustomStringConvertible {
    let status: Int32?
    let stdout: String
    let stderr: String
    var description: String { "exit \(status.map { String($0) } ?? "none"), stdout \(stdout.debugDescription), stderr \(stderr.debugDescription)" }
}

extension PrivateHarbord {
    /// harbor-xpc-probe `methods NAME` (methods echo and check, its interface published), once it is ready.
    func methodsService(_ name: String) -> Child {
        let probe = Child([builtExecutable("harbor-xpc-probe"), "methods", name], environment: clientEnvironment)
        #expect(probe.waitForStdout("ready \(name)"), "the probe methods service did not start: \(probe.stdoutSoFar)")
        return probe
    }

    /// The real `harbor` binary with `arguments`, against this harbord, to its end.
    func runHarbor(_ arguments: [String]) -> ToolRun {
        let child = Child([builtExecutable("harbor")] + arguments, environment: clientEnvironment)
        let deadline = ContinuousClock.now + .seconds(20)
        _ = child.waitForStdout("\u{0}never", before: deadline)
        _ = child.waitForStderr("\u{0}never", before: deadline)
        return ToolRun(status: child.exitCode(before: deadline), stdout: child.stdoutSoFar, stderr: child.stderrSoFar)
    }
}

extension XPCTests {
    @Suite struct Tools {
        /// X17: a listener publishes its interface; `harbor introspect NAME`
        /// prints its methods with their request and reply types (text and
        /// JSON); a listener that publishes none, and a name that is not
        /// there, are typed errors with a non-zero exit.
        @Test func X17_introspectPrintsAListenersPublishedMethods() throws {
            let harbord = PrivateHarbord()
            let service = harbord.methodsService("com.example.x17")
            let text = harbord.runHarbor(["introspect", "com.example.x17"])
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout == """
                interface com.example.x17
                method echo(n: int, op: string) -> (count: int, n: int, pid: int, uid: int)
                method check(n: int, op: string) -> (count: int, n: int, pid: int, uid: int)

                """, "\(text)")

            let json = harbord.runHarbor(["introspect", "com.example.x17", "--json"])
            #expect(json.status == 0, "\(json)")
            #expect(json.stdout.contains(#"{"name":"echo","request":"(n: int, op: string)","reply":"(count: int, n: int, pid: int, uid: int)"}"#),
                    "\(json)")
            #expect(json.stdout.hasPrefix(#"{"interface":"com.example.x17","methods":["#), "\(json)")

            // In process: the same interface, decoded.
            let published = try XPCInterface.introspect("com.example.x17", bootstrap: harbord.client())
            #expect(published.methods.map(\.name) == ["echo", "check"])
            #expect(published.method(named: "echo")?.request == .object(["n": .int, "op": .string]))

            // A hostile listener's names are printed escaped, never raw.
            var hostile = XPCMethodRouter(interface: "evil\u{1B}]0;owned\u{07}")
            try hostile.add("m\u{1B}[2J", example: Ask(op: "", n: 0), reply: Ask(op: "", n: 0)) { $0 }
            let evil = try XPCListener(service: "com.example.x17.evil", bootstrap: harbord.client(),
                                       interface: hostile.interface) { $0.reject(reason: "no") }
            for arguments in [["introspect", "com.example.x17.evil"], ["introspect", "com.example.x17.evil", "--json"]] {
                let shown = harbord.runHarbor(arguments)
                #expect(shown.status == 0 && !shown.stdout.utf8.contains(0x1B) && !shown.stdout.utf8.contains(0x07), "\(shown)")
                #expect(shown.stdout.contains(#"evil\u{1B}]0;owned"#) || shown.stdout.contains(#"evil\u001b]0;owned"#), "\(shown)")
            }
            evil.cancel()

            // Only to processes the listener's requirement admits.
            let guarded = try XPCListener(service: "com.example.x17.guarded", requirement: .hasUserID(4242),
                                          bootstrap: harbord.client(), interface: hostile.interface) { $0.reject(reason: "no") }
            let refused = harbord.runHarbor(["introspect", "com.example.x17.guarded"])
            #expect(refused.status == 1 && refused.stderr.contains("peerRequirementNotMet"), "\(refused)")
            guarded.cancel()

            let plain = harbord.serve("com.example.x17.plain")
            let none = harbord.runHarbor(["introspect", "com.example.x17.plain"])
            #expect(none.status == 1 && none.stderr.contains("methodNotFound"), "\(none)")
            let missing = harbord.runHarbor(["introspect", "com.example.x17.none"])
            #expect(missing.status == 2, "\(missing)")
            _ = (service, plain)
        }

        /// X18: `harbor call NAME METHOD JSON` calls the method by name and
        /// prints the typed reply as JSON (exit 0); an error reply (the
        /// method threw), parameters that are not JSON or not the request
        /// type, an unknown method and a missing name exit non-zero with the
        /// typed error, its control characters escaped; ordinary messages to
        /// the same listener keep working.
        @Test func X18_callCallsAMethodByNameAndPrintsTheTypedReplyOrError() throws {
            let harbord = PrivateHarbord()
            let service = harbord.methodsService("com.example.x18")
            let name = "com.example.x18"

            let reply = harbord.runHarbor(["call", name, "echo", #"{"op": "echo", "n": 7}"#])
            #expect(reply.status == 0, "\(reply)")
            #expect(reply.stdout.hasPrefix(#"{"count":1,"n":7,"pid":\#(service.pid),"uid":\#(getuid())}"#), "\(reply)")

            let failed = harbord.runHarbor(["call", name, "check", #"{"op": "check", "n": -3}"#])
            #expect(failed.status == 1, "\(failed)")
            #expect(failed.stderr.contains("methodFailed: Refusal:") && failed.stderr.contains("negative: -3"), "\(failed)")
            #expect(!failed.stderr.utf8.contains(0x1B), "the error's escape character reached the terminal: \(failed)")
            #expect(failed.stdout.isEmpty, "\(failed)")

            let malformed = harbord.runHarbor(["call", name, "echo", #"{"op": "echo", "n": "#])
            #expect(malformed.status == 1 && malformed.stderr.contains("codingFailed: the parameters are not JSON"), "\(malformed)")

            let mistyped = harbord.runHarbor(["call", name, "echo", #"{"op": 5, "n": 1}"#])
            #expect(mistyped.status == 1 && mistyped.stderr.contains("codingFailed: the parameters of echo are not a Ask"),
                    "\(mistyped)")

            let unknown = harbord.runHarbor(["call", name, "reboot", "{}"])
            #expect(unknown.status == 1 && unknown.stderr.contains("methodNotFound: \(name) has no method reboot"), "\(unknown)")

            let missing = harbord.runHarbor(["call", "com.example.x18.none", "echo", "{}"])
            #expect(missing.status == 2, "\(missing)")

            // A reply a tool cannot show (it holds a right) is a typed error, not a crash.
            var rights = XPCMethodRouter(interface: "com.example.x18.rights")
            let spare = ReceiveRight()
            let handed = spare.makeSendRight()
            rights.add("port", request: .object([:]), reply: .any) { (_: XPCValue) in [handed] }
            let router = rights
            let holder = try XPCListener(service: "com.example.x18.rights", bootstrap: harbord.client(),
                                         interface: router.interface) { $0.accept(methods: router) }
            let right = harbord.runHarbor(["call", "com.example.x18.rights", "port"])
            #expect(right.status == 1 && right.stderr.contains("codingFailed"), "\(right)")
            holder.cancel()

            // The same calls in process, and an ordinary message beside them.
            let session = try XPCSession(machService: name, bootstrap: harbord.client())
            let typed = try session.sendSync(XPCMethodCall(method: "echo", parameters: Ask(op: "echo", n: 9))).decode(as: Answer.self)
            #expect(typed.n == 9)
            #expect(xpcCode { _ = try session.sendSync(XPCMethodCall(method: "check", parameters: Ask(op: "x", n: -1))) } == .methodFailed)
            #expect(try session.sendSync(Ask(op: "echo", n: 4)).decode(as: Answer.self).n == 4,
                    "a message that is not a method call went to the router's fallback")
            session.cancel(reason: "done")
        }

        /// X18: HarborCoding is self-describing, so a typed value converts to
        /// an `XPCValue` and back without its Swift type, and JSON's numbers
        /// are fitted to the published type (an integer for a double, an
        /// array of numbers for bytes).
        @Test func X18_aValueConvertsWithoutItsSwiftType() throws {
            struct Sample: Codable, Equatable {
                var name: String
                var ratio: Double
                var bytes: [UInt8]
                var items: [Int]
                var inner: [String: Bool]
                var big: UInt64
            }
            let sample = Sample(name: "a\u{1B}b", ratio: 2.5, bytes: [1, 2], items: [-1, 3], inner: ["x": true], big: .max)
            let value = try MessageDecoder().decode(XPCValue.self, from: MessageEncoder().encode(sample, id: 1))
            #expect(value == .object(["name": .string("a\u{1B}b"), "ratio": .double(2.5), "bytes": .bytes([1, 2]),
                                      "items": .array([.int(-1), .int(3)]), "inner": .object(["x": .bool(true)]),
                                      "big": .uint(.max)]))
            #expect(try MessageDecoder().decode(Sample.self, from: MessageEncoder().encode(value, id: 1)) == sample)

            let type = try XPCType(describing: sample)
            #expect(type.description == "(big: int, bytes: bytes, inner: (x: bool), items: []int, name: string, ratio: double)")
            let fromJSON = XPCValue.object(["name": .string("n"), "ratio": .int(3), "bytes": .array([.int(7)]),
                                            "items": .array([]), "inner": .object([:]), "big": .int(1)])
            let fitted = fromJSON.fitted(to: type)
            let decoded = try MessageDecoder().decode(Sample.self, from: MessageEncoder().encode(fitted, id: 1))
            #expect(decoded == Sample(name: "n", ratio: 3, bytes: [7], items: [], inner: [:], big: 1))
            #expect(throws: MessageCodingError.self, "unfitted, the integer is not a double") {
                try MessageDecoder().decode(Sample.self, from: MessageEncoder().encode(fromJSON, id: 1))
            }
        }
    }
}
