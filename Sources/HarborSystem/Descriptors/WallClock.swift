// Harbor — the wall clock, for times people read (a name's check-in in `harbor print`), never for timeouts.
import Glibc

/// `CLOCK_REALTIME`: it jumps when the clock is set, so it only stamps
/// events for people; deadlines use ``MonotonicInstant``.
package enum WallClock {
    /// Whole seconds since the Unix epoch. C: `clock_gettime(CLOCK_REALTIME)` (vDSO).
    package static var secondsSinceEpoch: Int {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int(spec.tv_sec)
    }
}
