// Harbor — Unix signals: masks and signalfd(2).
import CHarborLinux
import Glibc

/// One signal as a signalfd delivered it.
package struct DeliveredSignal: Sendable {
    package var signal: CInt
    package var senderPID: pid_t
    package var senderUID: uid_t
}

/// Signal masks and signal descriptors.
package enum Signals {
    /// Whether `signal` can be blocked and received (in range; not
    /// `SIGKILL` or `SIGSTOP`).
    package static func canBeReceived(_ signal: CInt) -> Bool {
        signal > 0 && signal < 65 && signal != SIGKILL && signal != SIGSTOP
    }

    /// Blocks `signals` in the calling thread. C: `pthread_sigmask(SIG_BLOCK)`.
    /// Every signal must pass ``canBeReceived(_:)``.
    package static func block(_ signals: [CInt]) throws(SystemError) {
        var set = makeSet(signals)
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard result == 0 else { throw SystemError(errno: result, call: "pthread_sigmask") }
    }

    /// A non-blocking, close-on-exec signalfd receiving `signals`.
    /// C: `signalfd(-1, …, SFD_CLOEXEC | SFD_NONBLOCK)`.
    package static func openDescriptor(for signals: [CInt]) throws(SystemError) -> CInt {
        var set = makeSet(signals)
        return try systemCall("signalfd") { signalfd(-1, &set, charbor_SFD_CLOEXEC | charbor_SFD_NONBLOCK) }
    }

    /// Reads one delivered signal from a signalfd; nil if none waits.
    /// C: `read(2)` of one `signalfd_siginfo`.
    package static func readDelivered(_ fd: CInt) -> DeliveredSignal? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        guard Glibc.read(fd, &info, size) == size else { return nil }
        return DeliveredSignal(signal: CInt(info.ssi_signo), senderPID: pid_t(info.ssi_pid), senderUID: info.ssi_uid)
    }

    /// Every (thread, signal) of this process where the signal is not blocked,
    /// read from each thread's `SigBlk` mask in `/proc/self/task/<tid>/status`.
    package static func threadsNotBlocking(_ signals: [CInt]) -> [(thread: pid_t, signal: CInt)] {
        var missing: [(thread: pid_t, signal: CInt)] = []
        for name in FileSystem.entries(of: "/proc/self/task") ?? [] {
            guard let tid = pid_t(name),
                  let line = FileSystem.firstLine(startingWith: "SigBlk:", in: "/proc/self/task/\(name)/status"),
                  let mask = UInt64(trimmed(line.dropFirst(7)), radix: 16) else { continue }
            for signal in signals where mask & (UInt64(1) << UInt64(signal - 1)) == 0 {
                missing.append((tid, signal))
            }
        }
        return missing
    }

    private static func trimmed(_ text: Substring) -> Substring {
        text.drop { $0 == " " || $0 == "\t" }.prefix { !($0 == " " || $0 == "\t" || $0 == "\n") }
    }

    private static func makeSet(_ signals: [CInt]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }
}
