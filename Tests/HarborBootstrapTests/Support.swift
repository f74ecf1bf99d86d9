// Harbor — helpers for the bootstrap tests: temporary directories, child processes, harbord, the CLI, NOTIFY_SOCKET.
import CHarborLinux
import Glibc
import HarborBootstrap
import HarborRunLoop
import HarborTestSupport
import Testing

/// Every bootstrap suite nests in here, so they run one at a time and the
/// process-wide descriptor checks mean something.
@Suite(.serialized) struct BootstrapTests {}

/// A directory under /tmp, world-searchable (so a child running as
/// `nobody` reaches the socket), removed with its files at the end.
final class TemporaryDirectory {
    let path: String
    init() {
        var template = Array("/tmp/harbor-bs-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        chmod(path, 0o755)
    }
    deinit {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
    func write(_ name: String, _ text: String, mode: mode_t = 0o644) -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        chmod(file, mode)
        return file
    }
    /// Copies an executable in (mode 0755), for a child running as `nobody`
    /// who may not reach the build directory; its path.
    func copyExecutable(_ source: String, as name: String) -> String {
        let copy = path + "/" + name
        let input = open(source, O_RDONLY | O_CLOEXEC)
        let output = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = Glibc.read(input, &chunk, chunk.count)
            if count <= 0 { break }
            _ = chunk.withUnsafeBytes { Glibc.write(output, $0.baseAddress, count) }
        }
        close(input)
        close(output)
        chmod(copy, 0o755)
        return copy
    }

    func read(_ name: String) -> String? {
        let fd = open(path + "/" + name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = Glibc.read(fd, &chunk, chunk.count)
        return count >= 0 ? String(decoding: chunk[0..<count], as: UTF8.self) : nil
    }
}

/// A harbord process on a temporary socket.
final class HarbordProcess {
    let directory = TemporaryDirectory()
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

    private lazy var nobodyCopy: String = directory.copyExecutable(builtExecutable("harbor"), as: "harbor")

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
    let directory = TemporaryDirectory()
    let worker = LoopWorker(name: "test.harbord")
    let server: BootstrapServer
    let log = EventLog()

    init(policy: BootstrapPolicy = BootstrapPolicy(), unitStarter: String? = nil) throws {
        let log = self.log
        server = try BootstrapServer(endpoint: .path(directory.path + "/bootstrap.sock"), policy: policy,
                                     unitStarter: unitStarter) { _, line in log.record(line) }
        let server = self.server
        let loop = worker.loop
        try worker.performAndWait { try? server.start(on: loop) }
    }

    var socketPath: String { directory.path + "/bootstrap.sock" }

    func client() throws -> BootstrapClient { try BootstrapClient(socketPath: socketPath, timeout: .seconds(5)) }

    func shutDown() {
        let server = self.server
        try? worker.performAndWait { server.stop() }
        worker.stop()
    }
}

