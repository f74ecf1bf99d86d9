// Harbor — the gRPC reference: grpc-swift 2 unary calls over a Unix-domain socket, between two grpc-peer processes.
import CHarborLinux
import Glibc

/// A grpc-swift 2 unary echo of 64 bytes over a Unix-domain socket
/// (HTTP/2, plaintext), made by `grpc-peer client` to `grpc-peer serve`
/// (`Benchmarks/grpc-peer`, its own package, so harbor-bench does not link
/// grpc-swift). Each `measure` asks the client process for
/// `warmUp + iterations` calls; it times each call itself and sends the
/// times back, so the control exchange is not in the samples. The harness's
/// CPU µs (this process) is near zero for it; the report gives the client
/// process's CPU time per call (`clientCPU`; the server's is not counted).
final class GRPCUnaryCall: BenchmarkVariant {
    let name = "grpc"
    let label = "grpc-swift 2 unary over a Unix socket, grpc-peer client and server processes"
    /// The client process's CPU nanoseconds per call, one value per measure
    /// of the last run (the report prints their median).
    nonisolated(unsafe) static var clientCPU: [Int64] = []
    /// `grpc-peer`, from HARBOR_BENCH_GRPC_PEER or else where its package
    /// builds it under the current directory, if it is there.
    static var executable: String? {
        let path = getenv("HARBOR_BENCH_GRPC_PEER").map { String(cString: $0) }
            ?? "Benchmarks/grpc-peer/.build/release/grpc-peer"
        return access(path, X_OK) == 0 ? path : nil
    }

    private let executable: String
    private var directory = ""
    private var server: (pid: pid_t, socket: CInt)?
    private var client: (pid: pid_t, socket: CInt)?

    init(executable: String) {
        self.executable = executable
    }

    func start() throws {
        var template = Array("/tmp/harbor-bench-grpc-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let path = directory + "/grpc.sock"
        server = try Self.spawn([executable, "serve", path])
        var ready = [UInt8](repeating: 0, count: 6)
        guard let server, Self.readExactly(server.socket, &ready, 6), ready == Array("ready\n".utf8) else {
            throw BenchmarkFailure("grpc-peer serve did not start")
        }
        client = try Self.spawn([executable, "client", path])
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let client else { throw BenchmarkFailure("measure before start") }
        let count = warmUp + iterations
        var command: (UInt64, UInt64) = (UInt64(count), 64)
        guard write(client.socket, &command, 16) == 16 else { throw BenchmarkFailure("grpc-peer client is gone") }
        var times = [Int64](repeating: 0, count: count + 1)
        let complete = times.withUnsafeMutableBytes { Self.readExactly(client.socket, $0.baseAddress!, $0.count) }
        guard complete else { throw BenchmarkFailure("grpc-peer client failed") }
        samples.append(contentsOf: times[warmUp..<count])
        Self.clientCPU.append(times[count] / Int64(count))
    }

    func stop() {
        for child in [client, server].compactMap({ $0 }) {
            var command: (UInt64, UInt64) = (0, 0)
            _ = write(child.socket, &command, 16)  // the client's "exit"
            close(child.socket)  // the server ends when its standard input closes
            var status: CInt = 0
            waitpid(child.pid, &status, 0)
        }
        (client, server) = (nil, nil)
        unlink(directory + "/grpc.sock")
        rmdir(directory)
    }

    /// Starts `arguments` with standard input and output on one end of a socket pair; returns the other.
    private static func spawn(_ arguments: [String]) throws -> (pid: pid_t, socket: CInt) {
        var ends: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw BenchmarkFailure("socketpair: errno \(charbor_errno())")
        }
        defer { close(ends[1]) }
        do {
            return (try BootstrapFixture.spawn(arguments, stdio: ends[1]), ends[0])
        } catch {
            close(ends[0])
            throw error
        }
    }

    private static func readExactly(_ fd: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        var done = 0
        while done < count {
            let got = read(fd, buffer + done, count - done)
            if got < 0 && charbor_errno() == EINTR { continue }
            guard got > 0 else { return false }
            done += got
        }
        return true
    }
}
