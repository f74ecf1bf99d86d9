// Harbor — `harbor call`: call a listener's method with JSON parameters, print the reply as JSON.
import ArgumentParser
import HarborBootstrap
import Glibc
import HarborXPC

struct Call: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call a method of a service with JSON parameters and print the reply as JSON.",
        discussion: """
            Sends {method, parameters} on a session (Docs/XPC.md, "Interfaces and tools"); the \
            parameters are fitted to the method's published request type where JSON cannot say \
            (an integer for a double, an array for bytes). Prints the reply as one line of JSON, \
            or the typed error (CODE: reason) on stderr; --json changes nothing (every command \
            takes it), the reply is any JSON value (Docs/schemas/harbor-call.schema.json). Exit \
            status 0 a reply, 1 an error reply (unknown method, parameters that are not the request, the \
            method failed) or parameters that are not JSON, 2 no such name, 3 name server \
            unreachable, 4 no answer in time, 5 not permitted.
            """)

    @Argument(help: "The service name.") var name: String
    @Argument(help: "The method's name.") var method: String
    @Argument(help: "The parameters, as JSON (an object for a struct).") var parameters: String = "{}"
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print the reply as JSON (what harbor call always does).")
    var json = false

    func run() throws {
        var value: XPCValue
        do { value = try JSONParser.parse(parameters) } catch {
            throw CommandFailure("\(XPCRichError.Code.codingFailed.rawValue): the parameters are not JSON: \(error.message)",
                                 code: 1)
        }
        let client = try connection.connect()
        do { _ = try client.lookUp(name) } catch { throw CommandFailure(error, name: name) }
        Self.startDeadline(seconds: connection.timeout)
        // The published request type, where there is one, says what JSON cannot.
        if let published = try? XPCInterface.introspect(name, bootstrap: client, timeout: connection.duration),
           let request = published.method(named: method)?.request {
            value = value.fitted(to: request)
        }
        let reply: XPCValue
        do {
            let session = try XPCSession(machService: name, bootstrap: client)
            defer { session.cancel(reason: "done") }
            reply = try session.sendSync(XPCMethodCall(method: method, parameters: value)).decode(as: XPCValue.self)
        } catch {
            throw CommandFailure(xpc: error, name: name)
        }
        say(JSONText.value(reply))
    }

    /// Ends the process with exit status 4 after `seconds`: a session's call
    /// waits for its reply (or the service's death) without a deadline.
    static func startDeadline(seconds: Double) {
        signal(SIGALRM) { _ in
            let text: StaticString = "harbor: no answer in time\n"
            _ = write(2, text.utf8Start, text.utf8CodeUnitCount)
            _exit(4)
        }
        alarm(UInt32(min(86_400, seconds.rounded(.up))))
    }
}
