// Harbor — harbord's command line: options, start-up checks, then the service group.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborSystemd
import Logging
import ServiceLifecycle
import UnixSignals

/// `harbord`: the Harbor bootstrap name server (Docs/harbord.md).
@main
struct Harbord: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "harbord",
        abstract: "The Harbor bootstrap name server.",
        discussion: """
            Maps service names to Harbor ports. A process connects to the bootstrap socket to get \
            its bootstrap right, then looks names up, checks them in, registers and lists them. \
            Names are scoped per uid (from the kernel's credentials) unless the policy file shares them.

            Under systemd: socket-activated (LISTEN_FDS, FileDescriptorName=bootstrap), Type=notify, \
            watchdog pings from the run loop, STOPPING=1 and exit 0 on SIGTERM. See Docs/harbord.md.

            Exit status: 0 stopped on SIGTERM/SIGINT, 64 bad command line, 71 cannot listen, 78 bad policy file.
            """)

    @Option(name: .long, help: ArgumentHelp(
        "The socket to listen on (default: /run/harbor/bootstrap.sock for root, else $XDG_RUNTIME_DIR/harbor/bootstrap.sock).",
        valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp(
        "The policy file: shared and declared names (default: /etc/harbor/policy.conf if it exists).", valueName: "file"))
    var policy: String?

    @Flag(name: .long, help: "Log for a terminal (time stamps) rather than for the journal (<N> priority prefixes).")
    var foreground = false

    @Flag(name: .long, help: "Log every request, not only check-ins, registrations and deaths.")
    var verbose = false

    @Option(name: .long, help: .hidden)
    var unitStarter: String?

    @Option(name: .long, help: .hidden)
    var debugWedgeAfter: Double?

    func validate() throws {
        if let debugWedgeAfter, !(debugWedgeAfter >= 0 && debugWedgeAfter < 1e6) {
            throw ValidationError("--debug-wedge-after needs a number of seconds")
        }
    }

    func run() async throws {
        let journal = !foreground && getenv("JOURNAL_STREAM") != nil
        let style: LineLogHandler.Style = journal ? .journal : .terminal
        let level: Logger.Level = verbose ? .debug : .info
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, style: style)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "harbord")

        let policy: BootstrapPolicy
        do {
            policy = try loadPolicy()
        } catch {
            for line in error.description.split(separator: "\n") { logger.error("\(line)") }
            throw ExitCode(78)
        }

        let endpoint: BootstrapServer.Endpoint
        do {
            endpoint = try chooseEndpoint(logger: logger)
        } catch {
            logger.error("\(error.message)")
            throw ExitCode(71)
        }

        let server: BootstrapServer
        do {
            server = try BootstrapServer(endpoint: endpoint, policy: policy, unitStarter: unitStarter) { level, text in
                logger.log(level: Logger.Level(level), "\(text)")
            }
        } catch {
            logger.error("\(error.detail)")
            throw ExitCode(71)
        }
        let daemon = Daemon(server: server, logger: logger, wedgeAfter: debugWedgeAfter.map { .milliseconds(Int64($0 * 1000)) })
        let group = ServiceGroup(
            services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
        try await group.run()
    }

    private func loadPolicy() throws(BootstrapPolicyError) -> BootstrapPolicy {
        if let policy { return try BootstrapPolicy(contentsOf: policy) }
        let fallback = "/etc/harbor/policy.conf"
        if access(fallback, F_OK) == 0 { return try BootstrapPolicy(contentsOf: fallback) }
        return BootstrapPolicy()
    }

    private func chooseEndpoint(logger: Logger) throws(StartupError) -> BootstrapServer.Endpoint {
        let passed: [ActivatedSocket]
        do { passed = try SocketActivation.takeListenDescriptors() } catch {
            throw StartupError("socket activation: \(error)")
        }
        if !passed.isEmpty {
            let chosen = passed.count == 1 ? passed[0] : passed.first { $0.name == "bootstrap" }
            guard let chosen, let descriptor = chosen.takeDescriptor() else {
                throw StartupError("systemd passed \(passed.count) sockets and none is named \"bootstrap\"")
            }
            if socket != nil { logger.notice("--socket ignored: systemd passed the socket (\(chosen.name))") }
            logger.info("socket-activated: serving the passed socket \(chosen.name) (fd \(descriptor))")
            return .adopted(descriptor)
        }
        return .path(socket ?? BootstrapAddress.serverPath)
    }
}

/// A start-up failure with its message.
struct StartupError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension Logger.Level {
    init(_ level: BootstrapServer.LogLevel) {
        switch level {
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        }
    }
}
