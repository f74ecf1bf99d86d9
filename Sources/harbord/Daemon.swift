// Harbor — harbord as a ServiceLifecycle service: the loop thread, sd_notify, graceful stop.
import Glibc
import HarborBootstrap
import HarborPorts
import HarborRunLoop
import HarborSystemd
import Logging
import ServiceLifecycle
import UnixSignals
import HarborSystem

/// Runs the name server on its own run-loop thread until graceful shutdown.
///
/// Start-up: the server starts on the loop, the watchdog timer joins the
/// same loop (so a wedged loop stops the pings), then `READY=1` with the
/// first `STATUS=`. Shutdown (SIGTERM/SIGINT through the service group):
/// `STOPPING=1`, the server stops accepting and releases its ports, the
/// loop thread is joined, and `run()` returns, so the process exits 0.
struct Daemon: Service {
    let server: BootstrapServer
    /// `--metrics-socket`: served from its own thread while harbord runs.
    let metrics: MetricsEndpoint?
    let logger: Logger
    let wedgeAfter: Duration?
    /// Tests only (the hidden `--debug-wedge-on-sigusr1`): SIGUSR1 wedges
    /// the loop instead of logging the status line.
    let wedgeOnSIGUSR1: Bool
    /// Reads the policy file again (SIGHUP): the policy and the file's
    /// name, or what is wrong with it.
    let loadPolicy: @Sendable () -> Result<(BootstrapPolicy, String), BootstrapPolicyError>

    func run() async throws {
        let notifier = ServiceNotifier()
        let worker = LoopWorker(name: "harbord")
        let logger = self.logger
        let lastStatus = HarborLock<String>("")
        server.onChange = { summary in
            let text = summary.description
            let changed = lastStatus.withLock { last in
                defer { last = text }
                return last != text
            }
            if changed { _ = try? notifier.status(text) }
        }
        let server = self.server
        let startError = HarborLock<String?>(nil)
        try? worker.performAndWait {
            do {
                try server.start(on: worker.loop)
                _ = RefusalReport.start(on: worker.loop, logger: logger)
                if let timer = try notifier.startWatchdog(on: worker.loop) {
                    logger.info("watchdog: pinging every \(Self.describe(timer.interval ?? .zero))")
                }
            } catch {
                startError.withLock { $0 = "\(error)" }
            }
        }
        if let problem = startError.withLock({ $0 }) {
            logger.error("cannot start: \(problem)")
            worker.stop()
            throw StartupError(problem)
        }
        if let metrics {
            do { try metrics.start(server: server, loop: worker.loop, logger: logger) } catch {
                logger.error("metrics: cannot start the thread serving \(metrics.path): \(error)")
            }
        }
        let summary = HarborLock<String>("")
        try? worker.performAndWait { summary.withLock { $0 = server.summary.description } }
        _ = try? notifier.ready(status: summary.withLock { $0 })
        logger.info("ready (\(summary.withLock { $0 }))")

        if let wedgeAfter {
            worker.loop.perform(after: wedgeAfter, inModes: [.default]) {
                Self.wedge(logger)
            }
        }
        // SIGHUP reloads the policy file; SIGUSR1 logs the status line from
        // the loop (so an answer also shows the loop is alive); only tests
        // make SIGUSR1 wedge the loop (to test WatchdogSec=). The signal
        // sequence lives until shutdown cancels the task.
        let signals = await UnixSignalsSequence(trapping: .sigusr1, .sighup)
        let wedgeOnSIGUSR1 = self.wedgeOnSIGUSR1
        let loadPolicy = self.loadPolicy
        let handler = Task {
            for await signal in signals {
                if signal == .sighup {
                    // Read and parsed off the loop; applied on it.
                    switch loadPolicy() {
                    case .success(let (policy, file)):
                        worker.loop.perform {
                            let changes = server.replacePolicy(policy)
                            let counts = "\(policy.declarations.count) declared names, "
                                + (changes.isEmpty ? "no change" : "\(changes.count) changed")
                            logger.notice("SIGHUP: reloaded \(file): \(counts)")
                            // At most 20 lines: a policy may declare 10,000 names.
                            for change in changes.prefix(20) { logger.info("reload: \(change)") }
                            if changes.count > 20 { logger.info("reload: … and \(changes.count - 20) more changes") }
                        }
                    case .failure(let error):
                        logger.error("SIGHUP: the policy file is not valid; keeping the running policy")
                        for line in error.description.split(separator: "\n") { logger.error("\(line)") }
                    }
                    continue
                }
                worker.loop.perform {
                    if wedgeOnSIGUSR1 { Self.wedge(logger) }
                    logger.notice("SIGUSR1: \(server.summary.description)")
                }
            }
        }

        try? await gracefulShutdown()

        handler.cancel()
        _ = try? notifier.stopping(status: "stopping")
        logger.info("stopping (SIGTERM or SIGINT)")
        metrics?.stop()
        try? worker.performAndWait { server.stop() }
        worker.stop()
    }

    /// Blocks the calling (loop) thread for ever: no callout, no watchdog ping.
    private static func wedge(_ logger: Logger) {
        logger.warning("debug: wedging the run loop (watchdog pings stop)")
        while true { sleep(3600) }
    }

    private static func describe(_ duration: Duration) -> String {
        let ms = Int(duration / .milliseconds(1))
        return ms >= 1000 && ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
    }
}
