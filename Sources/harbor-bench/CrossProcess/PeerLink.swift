// Harbor — the parent's side of the cross-process benchmarks: one peer process and every channel to it.
import CHarborLinux
import Glibc
import Harbor

/// What the peer is asked to serve next (one job per `measure`).
enum PeerJob: UInt64 {
    case floorPingPong = 1, harborEcho, sdbusEcho
    case floorStream, harborStream
    case floorRights, harborSendOnce, harborSendRight
    case chunks, rawMemfd, harborPayload
    case floorPassCred
    case chunksStreaming
    case startInterfaces
    case exit = 99
}

/// One peer process (harbor-bench re-executed with a hidden subcommand)
/// shared by all variants of a benchmark, so Harbor and its floors run
/// between the same two processes, alternating rounds. Its main thread
/// serves one job at a time: the parent names the job on a control socket,
/// runs its client loop, and waits for the peer's "done".
///
/// Channels, made before the spawn and inherited: `control` (blocking
/// SEQPACKET), `ping` (non-blocking SEQPACKET, each side in epoll), `bulk`
/// (blocking SEQPACKET), `pingCred` (`ping` with SO_PASSCRED), `stream` (blocking SOCK_STREAM, 4 MiB buffers),
/// `sdbus` (SOCK_STREAM handed to sd-bus). Harbor's rights come the Harbor
/// way: the initial message carries a send right to `home`, the peer's
/// hello a send right to its port.
final class PeerLink {
    static let subcommand = "__cross-process-peer"

    let control: CInt
    let ping: CInt
    let pingSet: CInt
    let bulk: CInt
    let stream: CInt
    let sdbus: CInt
    /// Like `ping`, with SO_PASSCRED on both ends (the floor Harbor's
    /// kernel-attested sender costs: the kernel attaches credentials).
    let pingCred: CInt
    let pingCredSet: CInt
    let home: ReceiveRight
    let toPeer: SendRight
    private var child: ChildProcess?
    /// A job was begun and not ended: the peer may be blocked inside it, deaf
    /// to `exit` (the client side threw part way).
    private var jobInProgress = false

    init() throws {
        var ends: [(CInt, CInt)] = []
        for (type, nonBlocking) in [(Raw.seqPacket, false), (Raw.seqPacket, true), (Raw.seqPacket, false),
                                    (Raw.stream, false), (Raw.stream, false), (Raw.seqPacket, true)] {
            ends.append(try Raw.inheritablePair(type, nonBlocking: nonBlocking))
        }
        for fd in [ends[3].0, ends[3].1] {
            var size: CInt = 4 << 20
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<CInt>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<CInt>.size))
        }
        // Ours keep CLOEXEC off only for the peer's ends.
        for (mine, _) in ends { _ = fcntl(mine, F_SETFD, FD_CLOEXEC) }
        (control, ping, bulk, stream, sdbus) = (ends[0].0, ends[1].0, ends[2].0, ends[3].0, ends[4].0)
        pingSet = try Raw.epoll(watching: ping)
        for fd in [ends[5].0, ends[5].1] {
            var on: CInt = 1
            setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, socklen_t(MemoryLayout<CInt>.size))
        }
        pingCred = ends[5].0
        pingCredSet = try Raw.epoll(watching: pingCred)
        home = ReceiveRight()
        var first = Message(id: 0)
        first.attach(home.makeSendRight())
        let arguments = [Self.subcommand] + ends.map { String($0.1) }
        let spawned = try ChildProcess.spawn(
            executable: Self.executablePath(), arguments: arguments, keeping: ends.map(\.1), initialMessage: first)
        for (_, theirs) in ends { close(theirs) }
        var hello = try home.receive(timeout: .seconds(30))
        toPeer = try hello.takeSendRight(at: 0)
        child = consume spawned
    }

    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return String(decoding: buffer[0..<max(0, length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Tells the peer to serve `job` for `count` operations of `size` bytes.
    func begin(_ job: PeerJob, count: Int, size: Int = 0, extra: Int = 0) {
        jobInProgress = job != .exit
        var command: (UInt64, UInt64, UInt64, UInt64) = (job.rawValue, UInt64(count), UInt64(size), UInt64(extra))
        _ = withUnsafeBytes(of: &command) { write(control, $0.baseAddress, $0.count) }
    }

    /// Has the peer start `interface-call`'s XPC listener and actor on the
    /// harbord at `socketPath` (the path goes as a message to its port).
    func startInterfaces(socketPath: String) throws {
        begin(.startInterfaces, count: 1)
        try toPeer.send(Message(id: 4, text: socketPath))
        try end()
    }

    /// Waits for the peer to finish the job.
    func end() throws {
        var answer: UInt8 = 0
        guard read(control, &answer, 1) == 1, answer == 1 else { throw BenchmarkFailure("the peer failed its job") }
        jobInProgress = false
    }

    deinit {
        let stuck = jobInProgress
        begin(.exit, count: 0)
        if let child = child.take() {
            if stuck { child.kill(SIGKILL) }
            _ = child.waitForExit()
        }
        for fd in [control, ping, pingSet, bulk, stream, sdbus, pingCred, pingCredSet] { close(fd) }
    }
}
