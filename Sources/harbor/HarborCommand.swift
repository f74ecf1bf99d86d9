// Harbor — the `harbor` command: subcommands, shared options, one-line errors and exit codes.
import ArgumentParser
import Glibc
import HarborBootstrap

/// `harbor`: talk to Harbor services by name through `harbord`.
@main
struct HarborCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "harbor",
        abstract: "Look up, list, message, ping and watch Harbor services by name; introspect and call their methods; "
            + "look into a process's ports (ports), a name's record (print) and its traffic (monitor, capture).",
        discussion: """
            Talks to the bootstrap name server (harbord) at $HARBOR_BOOTSTRAP, else \
            /run/harbor/bootstrap.sock (root) or $XDG_RUNTIME_DIR/harbor/bootstrap.sock.

            Every command takes --json: JSON instead of text, one object a line, one schema a \
            command (Docs/schemas/harbor-COMMAND.schema.json); human output's fields never hold \
            whitespace, but for quoted message text, which follows ": ".

            Exit status, the same for every command (each one's --help says which it uses): \
            0 success; 1 refused or an error reply (name in use, already checked in, bad request); \
            2 no such name; 3 name server unreachable (or the service's port is gone); 4 no answer \
            in time; 5 not permitted; 6 over your uid's quota (Docs/harbord.md); 64 wrong arguments.
            """,
        version: HarborVersion.string,
        subcommands: [LookUp.self, List.self, Send.self, Ping.self, Watch.self, Hold.self, Introspect.self, Call.self,
                      Ports.self, Print.self, Monitor.self, Capture.self])

    /// Parses and runs, printing a failure as one line on stderr with its exit code.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CommandFailure {
            printError(failure.message)
            Glibc.exit(failure.code)
        } catch {
            // Help and version requests exit 0 with their full text.
            if exitCode(for: error) == .success { exit(withError: error) }
            let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments"
            printError("\(message) (see 'harbor --help')")
            Glibc.exit(exitCode(for: error).rawValue)
        }
    }
}

/// Options every subcommand takes.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The name server's socket (overrides $HARBOR_BOOTSTRAP).", valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the name server or a reply.", valueName: "seconds"))
    var timeout: Double = 5

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be between 0 and 86400 seconds") }
    }

    var duration: Duration { .milliseconds(Int64(timeout * 1000)) }

    /// Connects, turning failure into a one-line error with its exit code.
    func connect() throws(CommandFailure) -> BootstrapClient {
        do { return try BootstrapClient(socketPath: socket, timeout: duration) } catch {
            throw CommandFailure(error)
        }
    }
}

/// A failure a subcommand reports: one line and an exit code.
struct CommandFailure: Error {
    let message: String
    let code: Int32

    init(_ message: String, code: Int32) {
        self.message = message
        self.code = code
    }

    /// The exit code each bootstrap error maps to (see `harbor --help`).
    init(_ error: BootstrapError, name: String? = nil) {
        let prefix = name.map { "\($0): " } ?? ""
        message = prefix + error.detail
        switch error.code {
        case .notFound: code = 2
        case .unreachable, .badReply: code = 3
        case .timedOut, .busy: code = 4
        case .notPermitted: code = 5
        case .overQuota: code = 6
        default: code = 1
        }
    }
}

/// Prints a line to stderr, its controls escaped (``TerminalText``): error
/// details can come from the name server.
func printError(_ line: String) {
    var bytes = Array("harbor: \(TerminalText.escaped(line))\n".utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}

/// Prints a line to stdout at once (scripts read it as it happens), its
/// controls escaped (``TerminalText``): names, units and bodies come from
/// other processes, and must not drive the terminal.
func say(_ line: String) {
    var bytes = Array((TerminalText.escaped(line) + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
}
