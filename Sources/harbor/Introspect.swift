// Harbor — `harbor introspect`: print the interface a listener publishes.
import ArgumentParser
import HarborBootstrap
import HarborXPC

struct Introspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "introspect",
        abstract: "Print the interface (methods and their types) a service's listener publishes.",
        discussion: """
            One line `interface NAME`, then one line per method: `method NAME(REQUEST) -> REPLY`, \
            types as in Docs/XPC.md ("Interfaces and tools"). With --json: one object \
            {"interface", "methods": [{"name", "request", "reply"}]}, types as that text \
            (Docs/schemas/harbor-introspect.schema.json). \
            Exit status 0 printed, 1 if the listener publishes no interface or refuses you, 2 no such name, \
            3 name server unreachable, 4 no answer in time, 5 not permitted.
            """)

    @Argument(help: "The service name.") var name: String
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object (Docs/schemas/harbor-introspect.schema.json).")
    var json = false

    func run() throws {
        let client = try connection.connect()
        do { _ = try client.lookUp(name) } catch { throw CommandFailure(error, name: name) }
        Call.startDeadline(seconds: connection.timeout)
        let interface: XPCInterface
        do {
            // The deadline above ends a wait that runs out (exit 4), first.
            interface = try XPCInterface.introspect(name, bootstrap: client, timeout: connection.duration + .seconds(1))
        } catch {
            throw CommandFailure(xpc: error, name: name)
        }
        if json {
            say(JSONText.object([
                ("interface", JSONText.string(interface.name)),
                ("methods", "[" + interface.methods.map { method in
                    JSONText.object([
                        ("name", JSONText.string(method.name)),
                        ("request", JSONText.string(method.request.description)),
                        ("reply", JSONText.string(method.reply.description)),
                    ])
                }.joined(separator: ",") + "]"),
            ]))
            return
        }
        say("interface \(interface.name)")
        for method in interface.methods {
            say("method \(method.name)\(Self.parameters(method.request)) -> \(method.reply)")
        }
    }

    /// A request's text after the method name: an object is already in
    /// parentheses, anything else goes in them.
    static func parameters(_ type: XPCType) -> String {
        if case .object = type { return type.description }
        return "(\(type))"
    }
}

extension CommandFailure {
    /// The exit code an XPC error maps to: 2 no such name, 1 anything
    /// else (an error reply). No answer in time is the deadline's (exit 4,
    /// ``Call/startDeadline(seconds:)``).
    init(xpc error: XPCRichError, name: String) {
        let code: Int32 = error.code == .serviceNotFound ? 2 : 1
        self.init("\(name): \(error.code.rawValue): \(error.reason)", code: code)
    }
}
