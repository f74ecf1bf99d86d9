// Harbor — the processes the bootstrap benchmarks talk to: harbord, a quiet echo service, a raw echo.
import CHarborLinux
import Glibc
import HarborBootstrap

/// A `harbord` on a private socket and a `harbor watch bench.echo --quiet`
/// service checked in through it (it answers pings), both child processes.
/// Killed when the fixture goes.
final class BootstrapFixture: @unchecked Sendable {
    // @unchecked: made and used on the benchmark's main thread only.
    static let serviceName = "bench.echo"
    let socketPath: String
    private let directory: String
    private var children: [pid_t] = []

    init() throws {
        var template = Array("/tmp/harbor-bench-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        socketPath = directory + "/bootstrap.sock"
        let harbord = try Self.sibling("harbord")
        let harbor = try Self.sibling("harbor")
        children.append(try Self.spawn([harbord, "--socket", socketPath, "--foreground"]))
        var client: BootstrapClient?
        for _ in 0..<3_000 where client == nil {  // 30 s: harbord under valgrind starts slowly
            client = try? BootstrapClient(socketPath: socketPath, timeout: .seconds(2))
            if client == nil { usleep(10_000) }
        }
        guard let client else { throw BenchmarkFailure("harbord did not start on \(socketPath)") }
        children.append(try Self.spawn([harbor, "watch", Self.serviceName, "--quiet", "--socket", socketPath]))
        for _ in 0..<500 {
            if (try? client.list())?.contains(where: { $0.name == Self.serviceName && $0.state == .active }) == true { return }
            usleep(10_000)
        }
        throw BenchmarkFailure("the echo service did not check in")
    }

    deinit {
        for pid in children {
            kill(pid, SIGTERM)
            var status: CInt = 0
            waitpid(pid, &status, 0)
        }
        unlink(socketPath)
        rmdir(directory)
    }

    /// An executable built beside harbor-bench.
    static func sibling(_ name: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = String(decoding: buffer[0..<max(0, count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let path = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/" + name
        guard access(path, X_OK) == 0 else {
            throw BenchmarkFailure("\(path) is missing: build it first (swift build -c release --product \(name))")
        }
        return path
    }

    /// Starts `arguments` with stdout and stderr on /dev/null (or `stdio` for stdin and stdout).
    static func spawn(_ arguments: [String], stdio: CInt? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdio {
            posix_spawn_file_actions_adddup2(&actions, stdio, 0)
            posix_spawn_file_actions_adddup2(&actions, stdio, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { word in word.withCString { strdup($0) } } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, nil, argv, charbor_environ())
        guard status == 0 else { throw BenchmarkFailure("cannot start \(arguments[0]): errno \(status)") }
        return pid
    }
}

/// The floor: a 16-byte request and its echo over an AF_UNIX SOCK_SEQPACKET
/// socket pair to another process (`cat`, reading the socket as stdin and
/// writing it back as stdout). No Harbor code runs.
final class ProcessEchoFloor: BenchmarkVariant {
    let name = "floor"
    let label = "raw SEQPACKET write + read to an echo process (cat)"
    let isFloor = true
    private var peer: SocketPeer?
    private var socket: CInt { peer?.socket ?? -1 }

    func start() throws {
        peer = try SocketPeer(["/bin/cat"])
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let socket = self.socket
        var request = [UInt8](repeating: 7, count: 16)
        var reply = [UInt8](repeating: 0, count: 64)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            guard write(socket, &request, request.count) == request.count, read(socket, &reply, reply.count) > 0 else {
                throw BenchmarkFailure("echo process failed: errno \(charbor_errno())")
            }
        }
    }

    func stop() {
        peer?.stop()
        peer = nil
    }
}
