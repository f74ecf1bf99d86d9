// Harbor — helpers for the bootstrap tests: temporary directories, child processes, harbord, the CLI, NOTIFY_SOCKET.
import CHarborLinux
import Glibc
import HarborBootstrap
import HarborRunLoop
import HarborTestSupport
import Synchronization
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
    func read(_ name: String) -> String? {
        let fd = open(path + "/" + name, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = Glibc.read(fd, &chunk, chunk.count)
        return count >= 0 ? String(decoding: chunk[0..<count], as: UTF8.self) : nil
    }
}

/// An executable built beside the test runner (harbord, harbor).
func builtExecutable(_ name: String) -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe = String(decoding: buffer[0..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/" + name
}

/// PATH and HOME of this process, for children.
func baseEnvironment() -> [String] {
    ["PATH", "HOME"].compactMap { name -> String? in
        guard let value = getenv(name) else { return nil }
        return "\(name)=\(String(cString: value))"
    }
}

/// A child process with an explicit environment; stdout and stderr can be captured.
final class Child {
    let pid: pid_t
    private let pidDescriptor: CInt
    let stdoutDescriptor: CInt
    let stderrDescriptor: CInt
    private(set) var exitStatus: CInt?
    private var seen: [CInt: String] = [:]

    init(_ arguments: [String], environment: [String], captureOutput: Bool = true) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        var out: [CInt] = [-1, -1]
        var err: [CInt] = [-1, -1]
        if captureOutput {
            _ = pipe(&out)
            _ = pipe(&err)
            for fd in out + err { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, out[1], 1)
            posix_spawn_file_actions_adddup2(&actions, err[1], 2)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
        precondition(spawned == 0, "posix_spawn \(arguments[0]) failed: \(spawned)")
        for pointer in argv + envp { free(pointer) }
        posix_spawn_file_actions_destroy(&actions)
        if captureOutput {
            close(out[1])
            close(err[1])
        }
        stdoutDescriptor = out[0]
        stderrDescriptor = err[0]
        pid = child
        pidDescriptor = charbor_pidfd_open(child, 0)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            waitForExit(before: .now + .seconds(5))
        }
        close(pidDescriptor)
        if stdoutDescriptor >= 0 { close(stdoutDescriptor) }
        if stderrDescriptor >= 0 { close(stderrDescriptor) }
    }

    /// Waits on its pidfd for the child to exit; the wait status, or nil at the deadline.
    @discardableResult
    func waitForExit(before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> CInt? {
        if let exitStatus { return exitStatus }
        var probe = pollfd(fd: pidDescriptor, events: Int16(POLLIN), revents: 0)
        let ms = max(0, Int32(ContinuousClock.now.duration(to: deadline) / .milliseconds(1)))
        guard poll(&probe, 1, ms) > 0 else { return nil }
        var status: CInt = 0
        waitpid(pid, &status, 0)
        exitStatus = status
        return status
    }

    /// The exit code (nil if killed by a signal or still running at the deadline).
    func exitCode(before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> Int32? {
        guard let status = waitForExit(before: deadline), status & 0x7f == 0 else { return nil }
        return (status >> 8) & 0xff
    }

    /// Reads `descriptor` until `text` shows up (true) or EOF/the deadline (false).
    func waitFor(_ text: String, on descriptor: CInt, before deadline: ContinuousClock.Instant = .now + .seconds(20)) -> Bool {
        while !(seen[descriptor, default: ""].contains(text)) {
            var probe = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ms = max(0, Int32(ContinuousClock.now.duration(to: deadline) / .milliseconds(1)))
            guard poll(&probe, 1, ms) > 0 else { return false }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { return false }
            seen[descriptor, default: ""] += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return true
    }

    func waitForStdout(_ text: String) -> Bool { waitFor(text, on: stdoutDescriptor) }
    func waitForStderr(_ text: String) -> Bool { waitFor(text, on: stderrDescriptor) }

    /// Everything on stdout until EOF (call after the child exited).
    func allStdout() -> String {
        _ = waitFor("\u{0}never", on: stdoutDescriptor, before: .now + .seconds(5))
        return seen[stdoutDescriptor, default: ""]
    }

    /// What stderr said so far (for failure messages).
    var stderrSoFar: String { seen[stderrDescriptor, default: ""] }
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

    private lazy var nobodyCopy: String = {
        let copy = directory.path + "/harbor"
        let source = open(builtExecutable("harbor"), O_RDONLY | O_CLOEXEC)
        let target = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = read(source, &chunk, chunk.count)
            if count <= 0 { break }
            _ = chunk.withUnsafeBytes { write(target, $0.baseAddress, count) }
        }
        close(source)
        close(target)
        chmod(copy, 0o755)
        return copy
    }()

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
    let worker = RunLoopThread(name: "test.harbord")
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

