// Harbor — small helpers the demo needs: a thread and a clock.
import Glibc
import Harbor
import HarborSystem

/// Starts a detached POSIX thread running `body`.
enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        SystemThread.start(body).detach()
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
enum MonotonicClock {
    static func nanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
