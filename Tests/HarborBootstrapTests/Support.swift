// Harbor — helpers for the bootstrap tests: harbord, the CLI, an in-process server.
import CHarborLinux
import Glibc
import HarborBootstrap
import HarborRunLoop
import HarborTestSupport
import Testing

/// Every bootstrap suite nests in here, so they run one at a time and the
/// process-wide descriptor checks mean something.
@Suite(.serialized, .deadline) struct BootstrapTests {}

/// A harbord process on a temporary socket.
final class HarbordProcess {
    let directory = TemporaryDirectory(prefix: "harbor-bs")
    let socketPath: String
    let child: Child

    init(policy: String? = nil, extraArguments: [String] = [], environment: [String] = []) {
        socketPath = directory.path + "/bootstrap.sock"
        var arguments = [builtExecutable("harbord"), "--foreground", "--socket", socketPath]
        if let policy { arguments += ["--policy", directory.write("policy.conf", policy)] }
        child = Child(arguments + extraArguments, environment: baseEnvironment() + environment)
    }

    /// Waits for the "ready" log line.
    func waitUntilReady() -> Bool { child.waitForStderr("ready (") }

    /// Runs the `harbor` CLI against this server, as root or as `nobody`.
    func harbor(_ arguments: [String], asNobody: Bool = false) -> Child {
        // nobody may not be able to reach the build directory (under /root, say): run a copy.
        let executable = asNobody ? nobodyCopy : builtExecutable("harbor")
        let command = [executable] + arguments
        let prefix = asNobody ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
        return Child(prefix + command, environment: baseEnvironment() + ["HARBOR_BOOTSTRAP=\(socketPath)"])
    }

    private lazy var nobodyCopy: String = directory.copy(builtExecutable("harbor"), as: "harbor")

    /// A client in this process.
    func client() throws -> BootstrapClient { try BootstrapClient(socketPath: socketPath) }

    /// SIGTERM, then the exit code.
    func stop() -> Int32? {
        kill(child.pid, SIGTERM)
        return child.exitCode()
    }
}

/// A name server inside this process, on its own run-loop thread.
final class InProcessServer {
    let directory = TemporaryDirectory(prefix: "harbor-bs")
    let worker = LoopWorker(name: "test.harbord")
    let server: BootstrapServer
    let log = EventLog()
    /// Each line that came with fields: the line, a tab, then `key=value`
    /// pairs in the order given, separated by spaces.
    let fieldLog = EventLog()

    init(policy: BootstrapPolicy = BootstrapPolicy(), quotas: BootstrapQuotas = BootstrapQuotas(),
         unitStarter: String? = nil) throws {
        let (log, fieldLog) = (self.log, self.fieldLog)
        server = try BootstrapServer(endpoint: .path(directory.path + "/bootstrap.sock"), policy: policy,
                                     quotas: quotas, unitStarter: unitStarter) { _, line, fields in
            log.append(line)
            if !fields.isEmpty { fieldLog.append(line + "\t" + fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")) }
        }
        let server = self.server
        let loop = worker.loop
        try worker.performAndWait { try? server.start(on: loop) }
    }

    var socketPath: String { directory.path + "/bootstrap.sock" }

    func client() throws -> BootstrapClient { try BootstrapClient(socketPath: socketPath, timeout: .seconds(5)) }

    /// What `body` returns, run on the server's loop thread (where its state lives).
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (BootstrapServer) -> T) throws -> T {
        let result = Outcome<T>()
        let server = self.server
        try worker.performAndWait { result.value = body(server) }
        return result.value!
    }

    /// A value written on the loop's thread before `performAndWait` returns, read after.
    private final class Outcome<T>: @unchecked Sendable { var value: T? }

    func shutDown() {
        let server = self.server
        try? worker.performAndWait { server.stop() }
        worker.stop()
    }
}

