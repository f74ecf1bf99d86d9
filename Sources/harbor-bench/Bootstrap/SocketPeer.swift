// Harbor — a benchmark floor's other process: a command on the far end of a SEQPACKET socket pair.
import CHarborLinux
import Glibc

/// A child process whose stdin and stdout are one end of an `AF_UNIX`
/// `SOCK_SEQPACKET` socket pair; this process keeps the other end. The raw
/// floors of the bootstrap benchmarks talk to theirs through it.
struct SocketPeer {
    /// This process's end of the pair.
    let socket: CInt
    let child: pid_t

    /// Starts `command` (argv) on the far end of a new pair.
    init(_ command: [String]) throws {
        var pair: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC, 0, &pair) == 0 else {
            throw BenchmarkFailure("socketpair: errno \(charbor_errno())")
        }
        defer { close(pair[1]) }
        do { child = try BootstrapFixture.spawn(command, stdio: pair[1]) } catch {
            close(pair[0])
            throw error
        }
        socket = pair[0]
    }

    /// Closes this end (the child sees EOF and exits) and reaps the child.
    func stop() {
        close(socket)
        var status: CInt = 0
        waitpid(child, &status, 0)
    }
}
