// Harbor — the wall clock, for timestamps a person or another tool reads (captures, a name's check-in).
import CHarborLinux
import Glibc

/// Reads `CLOCK_REALTIME`: the time of day, which can jump. Only for
/// timestamps shown to people and tools (a capture's packet times); every
/// timeout and deadline runs on ``MonotonicInstant``.
package enum WallClock {
    /// Nanoseconds since 1970-01-01 00:00 UTC. C: `clock_gettime(CLOCK_REALTIME)`
    /// (a vDSO call, no system call).
    package static var nanosecondsSinceEpoch: Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
    }

    /// Whole seconds since the Unix epoch (`harbor print`'s check-in time).
    package static var secondsSinceEpoch: Int {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int(spec.tv_sec)
    }
}
