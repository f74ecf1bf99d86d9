// Harbor — the raw floor of a look-up: a 16-byte request, and a reply carrying two descriptors, to another process.
import CHarborLinux
import Glibc

/// The least a look-up can cost on Linux: a 16-byte request over an
/// AF_UNIX SOCK_SEQPACKET socket pair to another process, and its 16-byte
/// reply carrying two descriptors in SCM_RIGHTS (what a look-up's reply
/// must carry: a send right is a connection and the port's slot counter),
/// which the asker receives and closes. The other process is harbor-bench
/// re-executed (``serve()``), holding one socket and one memfd that it
/// passes with every reply, as harbord passes its one right per name. No
/// Harbor code runs.
final class DescriptorReplyFloor: BenchmarkVariant {
    /// The command line of the other process: `harbor-bench __descriptor-reply` (the socket is its stdin).
    static let subcommand = "__descriptor-reply"
    let name = "floor-fds"
    let label = "raw SEQPACKET request + reply carrying 2 fds (SCM_RIGHTS) to another process"
    let isRaw = true
    private var peer: SocketPeer?
    private var socket: CInt { peer?.socket ?? -1 }

    func start() throws {
        peer = try SocketPeer([try BootstrapFixture.sibling("harbor-bench"), Self.subcommand])
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let socket = self.socket
        var request = [UInt8](repeating: 7, count: 16)
        var reply = [UInt8](repeating: 0, count: 64)
        let space = charbor_CMSG_SPACE(2 * MemoryLayout<CInt>.size)
        let control = UnsafeMutableRawPointer.allocate(byteCount: space, alignment: 8)
        defer { control.deallocate() }
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            guard write(socket, &request, request.count) == request.count else {
                throw BenchmarkFailure("descriptor-reply process failed: errno \(charbor_errno())")
            }
            let received = reply.withUnsafeMutableBytes { bytes in
                Raw.receiveClosingDescriptors(socket, bytes, control: control, space: space)
            }
            guard received == 2 else { throw BenchmarkFailure("the reply carried \(received) descriptors, not 2") }
        }
    }

    func stop() {
        peer?.stop()
        peer = nil
    }

    /// The other process: answers each packet on its stdin (a SEQPACKET
    /// socket) with 16 bytes and the same two descriptors (a socket and a
    /// memfd made once), until the socket closes.
    static func serve() -> Never {
        var pair: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC, 0, &pair) == 0 else { exit(1) }
        let memfd = charbor_memfd_create("harbor-bench-slots", UInt32(charbor_MFD_CLOEXEC))
        guard memfd >= 0 else { exit(1) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        while read(0, buffer, 64) > 0 {
            guard Raw.sendWithDescriptors(0, buffer, 16, pair[0], memfd) else { exit(1) }
        }
        exit(0)
    }
}
