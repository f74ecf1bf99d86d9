// Harbor — harbord's command line: options, start-up checks, then the service group.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborPorts
import HarborSystemd
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals
import HarborSystem

/// `harbord`: the Harbor bootstrap name server (Docs/harbord.md).
@main
struct Harbord: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "harbord",
        abstract: "The Harbor bootstrap name server.",
        discussion: """
            Maps service names to Harbor ports. A process connects to the bootstrap socket to get \
            its bootstrap right, then looks names up, checks them in, registers and lists them. \
            Names are scoped per uid (from the kernel's credentials) unless the policy file shares them.

            Under systemd: socket-activated (LISTEN_FDS, FileDescriptorName=bootstrap), Type=notify, \
            watchdog pings from the run loop, STOPPING=1 and exit 0 on SIGTERM. See Docs/harbord.md.

            Started as root outside a service manager, it gives up root once its socket is bound: it switches \
            to --user (default: the user harbord if it exists, else a uid of its own in 61184-65519).

            --check-config FILE checks a policy file and exits: 0 if it is valid, 78 with every problem \
            (FILE:LINE: message, at most 20) on stderr.

            SIGHUP reloads the policy file; SIGUSR1 logs the status line (names, clients).

            --metrics-socket PATH serves metrics (GET /metrics, the Prometheus text format) on a Unix stream \
            socket, mode 0660; without it harbord opens nothing for metrics.

            Exit status: 0 stopped on SIGTERM/SIGINT (or --check-config: the file is valid), 64 bad command line, \
            71 cannot listen, 77 cannot switch users, 78 bad policy file.
            """,
        version: HarborVersion.string)

    @Option(name: .long, help: ArgumentHelp(
        "The socket to listen on (default: /run/harbor/bootstrap.sock for root, else $XDG_RUNTIME_DIR/harbor/bootstrap.sock).",
        valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp(
        "The policy file: shared and declared names (default: /etc/harbor/policy.conf if it exists).", valueName: "file"))
    var policy: String?

    @Option(name: .long, help: ArgumentHelp(
        "Started as root: the user to switch to once the socket is bound (default: harbord if it exists, else a uid of its own in 61184-65519 that no account names; root keeps root).",
        valueName: "name"))
    var user: String?

    @Option(name: .long, help: ArgumentHelp(
        "Check the policy file FILE and exit: 0 if it is valid, 78 printing every problem.", valueName: "file"))
    var checkConfig: String?

    @Flag(name: .long, help: ArgumentHelp(
        "Be the activator (harbor-activate.service, as root): start the units named by the request files in /run/harbor/activate "
            + "that the policy file declares, refuse the others, remove the requests, exit."))
    var activatePending = false

    @Flag(name: .long, help: "Log lines for a terminal (time stamps, fields as key=value) rather than entries for the journal (fields HARBOR_NAME, HARBOR_UID, …).")
    var foreground = false

    @Flag(name: .long, help: ArgumentHelp(
        "Also log the debug-level events: look-ups of unknown names, dropped and refused requests, "
            + "clients that left before they were served (check-ins, registrations and deaths are always logged)."))
    var verbose = false

    @Option(name: .long, help: ArgumentHelp("Names one uid may check in (undeclared) or register.", valueName: "n"))
    var maxNamesPerUid = BootstrapQuotas().namesPerUser

    @Option(name: .long, help: ArgumentHelp("Connections one uid may hold to harbord.", valueName: "n"))
    var maxClientsPerUid = BootstrapQuotas().clientsPerUser

    @Option(name: .long, help: ArgumentHelp("Processes of one uid that may hold names at once (sessions).", valueName: "n"))
    var maxSessionsPerUid = BootstrapQuotas().sessionsPerUser

    @Option(name: .long, help: ArgumentHelp("Messages from one uid that may wait for services not checked in yet.", valueName: "n"))
    var maxPendingPerUid = BootstrapQuotas().pendingPerUser

    @Option(name: .long, help: ArgumentHelp(
        "Descriptors harbord keeps for itself (default: 1/16 of its limit, at least 64).", valueName: "n"))
    var descriptorReserve: Int?

    @Option(name: .long, help: ArgumentHelp(
        "Lower harbord's descriptor limit (RLIMIT_NOFILE) to this (default: raise it to the hard limit).", valueName: "n"))
    var maxDescriptors: Int?

    @Option(name: .long, help: ArgumentHelp(
        "Serve metrics (GET /metrics, Prometheus text format) on a Unix stream socket at this path, mode 0660 (default: none).",
        valueName: "path"))
    var metricsSocket: String?

    @Option(name: .long, help: .hidden)
    var unitStarter: String?

    @Option(name: .long, help: .hidden)
    var debugWedgeAfter: Double?

    @Flag(name: .long, help: .hidden)
    var debugWedgeOnSigusr1 = false

    func validate() throws {
        for (flag, value) in [("--max-names-per-uid", maxNamesPerUid), ("--max-clients-per-uid", maxClientsPerUid),
                              ("--max-sessions-per-uid", maxSessionsPerUid), ("--max-pending-per-uid", maxPendingPerUid)] where !(0...10_000_000).contains(value) {
            throw ValidationError("\(flag) must be between 0 and 10000000")
        }
        if let descriptorReserve, !(0...1_000_000).contains(descriptorReserve) {
            throw ValidationError("--descriptor-reserve must be between 0 and 1000000")
        }
        if let maxDescriptors, !(16...10_000_000).contains(maxDescriptors) {
            throw ValidationError("--max-descriptors must be between 16 and 10000000")
        }
        if let debugWedgeAfter, !(debugWedgeAfter >= 0 && debugWedgeAfter < 1e6) {
            throw ValidationError("--debug-wedge-after needs a number of seconds")
        }
    }

    /// Synchronous on the main thread up to the service group: the main
    /// thread must live (not exit into `dispatch_main`, as an async main's
    /// does) when harbord gives up root, or it would stay root while the
    /// other threads switch, and `/proc/PID/status` would still say uid 0.
    func run() throws {
        if let checkConfig { throw ExitCode(Self.check(policyFile: checkConfig)) }
        // The service group receives these through Dispatch's signalfd; the
        // main thread, waiting below, must not take them itself.
        try? Signals.block([SIGTERM, SIGINT, SIGUSR1, SIGHUP])
        let journal = !foreground && getenv("JOURNAL_STREAM") != nil
        let style: LineLogHandler.Style = journal ? .journal : .terminal
        let level: Logger.Level = verbose ? .debug : .info
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, style: style)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "harbord")

        var policy = BootstrapPolicy()
        var policyFailed = false
        do {
            policy = try loadPolicy()
        } catch {
            for line in error.description.split(separator: "\n") { logger.error("\(line)") }
            policyFailed = true
        }
        if activatePending {
            // Without a policy every request is refused (and removed, so the path unit does not loop).
            let activator = Activator(
                requests: ActivationRequests(), policy: policy, program: unitStarter ?? "systemctl", logger: logger)
            let status = activator.run()
            throw ExitCode(policyFailed ? 78 : status)
        }
        if policyFailed { throw ExitCode(78) }

        let endpoint: BootstrapServer.Endpoint
        do {
            endpoint = try chooseEndpoint(logger: logger)
        } catch {
            logger.error("\(error.message)")
            throw ExitCode(71)
        }

        if let maxDescriptors {
            var limits = rlimit(rlim_cur: rlim_t(maxDescriptors), rlim_max: rlim_t(maxDescriptors))
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) != 0 {
                logger.warning("cannot set the descriptor limit to \(maxDescriptors): \(String(cString: strerror(errno)))")
            }
        }
        var quotas = BootstrapQuotas()
        quotas.namesPerUser = maxNamesPerUid
        quotas.clientsPerUser = maxClientsPerUid
        quotas.sessionsPerUser = maxSessionsPerUid
        quotas.pendingPerUser = maxPendingPerUid
        quotas.descriptorReserve = descriptorReserve

        let managed = ProcessControl.environmentValue("INVOCATION_ID") != nil
            || ProcessControl.environmentValue("NOTIFY_SOCKET") != nil
        var madeDirectory: String?
        if case .path(let path) = endpoint, let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            if !FileSystem.exists(directory) { madeDirectory = directory }
        }
        let plan: (drop: PrivilegeDrop?, note: String?)
        do {
            if case .adopted = endpoint {
                plan = try PrivilegeDrop.plan(user: user, managed: true)
            } else {
                plan = try PrivilegeDrop.plan(user: user, managed: managed)
            }
        } catch {
            logger.error("\(error.message)")
            throw ExitCode(77)
        }

        // Bound before root is given up, like the bootstrap socket; the
        // backend bootstrapped before the server is made (it makes its metrics then).
        var metrics: MetricsEndpoint?
        if let metricsSocket {
            let registry = PrometheusCollectorRegistry()
            do { metrics = try MetricsEndpoint(path: metricsSocket, registry: registry) } catch {
                logger.error("\(error.message)")
                throw ExitCode(71)
            }
            MetricsEndpoint.bootstrapMetrics(into: registry)
        }
        let server: BootstrapServer
        do {
            server = try BootstrapServer(endpoint: endpoint, policy: policy, quotas: quotas, unitStarter: unitStarter) {
                level, text, fields in
                let metadata = fields.isEmpty ? nil : Logger.Metadata(fields.map { ($0.0, .string($0.1)) }) { $1 }
                logger.log(level: Logger.Level(level), "\(text)", metadata: metadata)
            }
        } catch {
            logger.error("\(error.detail)")
            if case .path(let path) = endpoint, let hint = socketHint(path) { logger.error("\(hint)") }
            metrics?.stop()
            throw ExitCode(71)
        }
        if let note = plan.note { logger.notice("\(note)") }
        if let drop = plan.drop {
            do {
                for line in try drop.perform(madeSocketDirectory: madeDirectory, socketPath: server.socketPath) {
                    logger.notice("\(line)")
                }
            } catch {
                logger.error("\(error.message)")
                throw ExitCode(77)
            }
        }
        let daemon = Daemon(server: server, metrics: metrics, logger: logger, wedgeAfter: debugWedgeAfter.map { .milliseconds(Int64($0 * 1000)) },
                            wedgeOnSIGUSR1: debugWedgeOnSigusr1, loadPolicy: { [policy = self.policy] in
            Self.reloadPolicy(explicit: policy)
        })
        // The service group logs its own workings at debug level (its
        // configuration, `Logger(_storage: …)`): never harbord's events.
        var groupLogger = logger
        groupLogger.logLevel = .info
        let group = ServiceGroup(
            services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: groupLogger)
        let finished = Gate()
        let failure = HarborLock<(any Error)?>(nil)
        Task.detached {
            do { try await group.run() } catch { failure.withLock { $0 = error } }
            finished.open()
        }
        finished.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// `--check-config FILE`: 0 and one line on stdout for a valid policy,
    /// 78 and every problem on stderr for a bad one.
    private static func check(policyFile path: String) -> Int32 {
        do {
            let policy = try BootstrapPolicy(contentsOf: path)
            let shared = policy.declarations.filter(\.isShared).count
            print("\(path): valid, \(policy.declarations.count) declared names (\(shared) shared)")
            return 0
        } catch {
            var bytes = Array("\(error.description)\n".utf8)
            _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
            return 78
        }
    }

    /// What to do when harbord cannot listen on `path` because it may not
    /// write the directory (or make it): nil when it may.
    private func socketHint(_ path: String) -> String? {
        var directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if directory.isEmpty { directory = "/" }
        // The nearest directory that exists is the one harbord must write.
        while !FileSystem.exists(directory), let slash = directory.lastIndex(of: "/") {
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
        }
        guard access(directory, W_OK) != 0 else { return nil }
        if socket == nil && ProcessControl.effectiveUserID != 0 && BootstrapAddress.userPath == nil {
            return "hint: harbord (uid \(ProcessControl.effectiveUserID)) cannot write \(directory): not root and XDG_RUNTIME_DIR is "
                + "not set, so it tried the system socket; set XDG_RUNTIME_DIR (e.g. /run/user/\(ProcessControl.effectiveUserID)) "
                + "or pass --socket PATH in a directory it can write"
        }
        return "hint: harbord (uid \(ProcessControl.effectiveUserID)) cannot write \(directory): pass --socket PATH in a directory it can write"
    }

    private func loadPolicy() throws(BootstrapPolicyError) -> BootstrapPolicy {
        try Self.policyFile(explicit: policy).map { path throws(BootstrapPolicyError) in try BootstrapPolicy(contentsOf: path) }
            ?? BootstrapPolicy()
    }

    /// The policy file harbord reads: `--policy`, else the default one if it exists.
    private static func policyFile(explicit: String?) -> String? {
        if let explicit { return explicit }
        let fallback = "/etc/harbor/policy.conf"
        return access(fallback, F_OK) == 0 ? fallback : nil
    }

    /// SIGHUP: the policy file read again (no file: no declarations).
    private static func reloadPolicy(explicit: String?) -> Result<(BootstrapPolicy, String), BootstrapPolicyError> {
        guard let path = policyFile(explicit: explicit) else { return .success((BootstrapPolicy(), "no policy file")) }
        do { return .success((try BootstrapPolicy(contentsOf: path), path)) } catch { return .failure(error) }
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
