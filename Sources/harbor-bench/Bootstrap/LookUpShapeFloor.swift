// Harbor — the kernel's part of a look-up as Harbor shapes it: epoll waits, credentials, two descriptors; no Harbor code.
import CHarborLinux
import Glibc

/// A look-up's system calls as Harbor makes them, with no Harbor code
/// between them: what the kernel alone charges for the way a look-up waits
/// and what it carries, so a run shows how much of a look-up is Harbor's
/// own work (`lookup-cached` against this) and how much the shape
/// (this against `floor-fds` and `floor`).
///
/// - The asker (this process) sends a 42-byte request (a look-up's size),
///   waits in `epoll_pwait2` on a set holding its socket with a 5 s
///   timeout (a client's reply wait), then receives with room for
///   credentials and descriptors, and closes the two descriptors.
/// - The answerer (harbor-bench re-executed, ``serve()``) sleeps in an
///   epoll set that holds another set holding the socket (harbord's run
///   loop holding the bootstrap port's set), then asks the inner set
///   (`epoll_wait`, timeout 0), receives, and answers with 56 bytes and two
///   descriptors (a socket and a memfd, a send right's connection and slot
///   counter).
/// - Both ends have `SO_PASSCRED` set, as every Harbor socket does: each
///   packet carries the kernel's credentials.
final class LookUpShapeFloor: BenchmarkVariant {
    /// The command line of the other process: `harbor-bench __lookup-shape` (the socket is its stdin).
    static let subcommand = "__lookup-shape"
    let name = "floor-shape"
    let label = "raw: a look-up's waits (epoll_pwait2; a nested set), credentials and 2 fds, no Harbor code"
    let isRaw = true
    private var peer: SocketPeer?
    private var epoll: CInt = -1

    func start() throws {
        let peer = try SocketPeer([try BootstrapFixture.sibling("harbor-bench"), Self.subcommand])
        self.peer = peer
        var on: CInt = 1
        epoll = epoll_create1(CInt(EPOLL_CLOEXEC))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        guard setsockopt(peer.socket, SOL_SOCKET, charbor_SO_PASSCRED, &on, socklen_t(MemoryLayout<CInt>.size)) == 0,
              epoll >= 0, epoll_ctl(epoll, EPOLL_CTL_ADD, peer.socket, &event) == 0 else {
            let failure = BenchmarkFailure("look-up shape: set-up failed: errno \(charbor_errno())")
            stop()  // the runner stops only the variants that started
            throw failure
        }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let socket = peer?.socket else { throw BenchmarkFailure("not started") }
        let epoll = self.epoll
        let request = UnsafeMutableRawBufferPointer.allocate(byteCount: 42, alignment: 8)
        let reply = UnsafeMutableRawBufferPointer.allocate(byteCount: 256, alignment: 8)
        let space = 256
        let control = UnsafeMutableRawPointer.allocate(byteCount: space, alignment: 8)
        var events = [epoll_event](repeating: epoll_event(), count: 32)
        defer {
            request.deallocate()
            reply.deallocate()
            control.deallocate()
        }
        request.initializeMemory(as: UInt8.self, repeating: 7)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            guard send(socket, request.baseAddress, request.count, Int32(charbor_MSG_NOSIGNAL)) == request.count else {
                throw BenchmarkFailure("look-up shape: send failed: errno \(charbor_errno())")
            }
            var timeout = timespec(tv_sec: 5, tv_nsec: 0)
            guard charbor_epoll_pwait2(epoll, &events, CInt(events.count), &timeout) == 1 else {
                throw BenchmarkFailure("look-up shape: no reply: errno \(charbor_errno())")
            }
            let received = Raw.receiveClosingDescriptors(socket, reply, control: control, space: space)
            guard received == 2 else { throw BenchmarkFailure("the reply carried \(received) descriptors, not 2") }
        }
    }

    func stop() {
        if epoll >= 0 { close(epoll) }
        epoll = -1
        peer?.stop()
        peer = nil
    }

    /// The other process: answers each packet on its stdin (a SEQPACKET
    /// socket) as harbord's run loop does, found through a set nested in
    /// another, with 56 bytes and the same two descriptors (a socket and a
    /// memfd made once), until the socket closes.
    static func serve() -> Never {
        var on: CInt = 1
        var pair: [CInt] = [-1, -1]
        let memfd = charbor_memfd_create("harbor-bench-slots", UInt32(charbor_MFD_CLOEXEC))
        let inner = epoll_create1(CInt(EPOLL_CLOEXEC))
        let outer = epoll_create1(CInt(EPOLL_CLOEXEC))
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        var nested = event
        guard socketpair(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC, 0, &pair) == 0, memfd >= 0,
              setsockopt(0, SOL_SOCKET, charbor_SO_PASSCRED, &on, socklen_t(MemoryLayout<CInt>.size)) == 0,
              inner >= 0, outer >= 0, epoll_ctl(inner, EPOLL_CTL_ADD, 0, &event) == 0,
              epoll_ctl(outer, EPOLL_CTL_ADD, inner, &nested) == 0 else { exit(1) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
        let control = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while true {
            // Interrupted calls are retried; any other failure ends the process (the asker sees EOF).
            guard epoll_wait(outer, &events, 64, -1) >= 0 else { if charbor_errno() == EINTR { continue } else { exit(1) } }
            _ = epoll_wait(inner, &events, 32, 0)
            // The request, with room for the credentials every packet carries.
            let count = Raw.receiveWithCredentials(0, buffer, 256, control: control)
            if count == 0 { exit(0) }
            guard count > 0 else { if charbor_errno() == EINTR { continue } else { exit(1) } }
            guard Raw.sendWithDescriptors(0, buffer, 56, pair[0], memfd) else { exit(1) }
        }
    }
}
