// Harbor — timerfd(2): a deadline the kernel turns into readability.
import CHarborLinux
import Glibc

/// An owned `CLOCK_MONOTONIC` timerfd, armed to absolute deadlines.
///
/// A run-loop mode arms one of these to its earliest timer (within tolerance),
/// so any number of timers cost one descriptor and one wake-up.
///
/// **Thread safety:** any thread.
package struct TimerDescriptor: ~Copyable, Sendable {
    package let descriptor: OwnedDescriptor

    /// C: `timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)`.
    package init() throws(SystemError) {
        let fd = try systemCall("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(charbor_TFD_CLOEXEC | charbor_TFD_NONBLOCK))
        }
        descriptor = OwnedDescriptor(taking: fd)
    }

    package var rawValue: CInt { descriptor.rawValue }

    /// Arms the timer to fire once at `deadline`; a deadline in the past fires
    /// at once. C: `timerfd_settime(TFD_TIMER_ABSTIME)`.
    @inline(never)
    package func arm(at deadline: MonotonicInstant) throws(SystemError) {
        // it_value of zero would disarm: the earliest real instant is 1 ns.
        var spec = itimerspec(it_interval: timespec(), it_value: deadline.nanoseconds <= 0
                              ? timespec(tv_sec: 0, tv_nsec: 1) : deadline.asTimespec)
        _ = try systemCall("timerfd_settime") {
            timerfd_settime(rawValue, Int32(charbor_TFD_TIMER_ABSTIME), &spec, nil)
        }
    }

    /// Disarms the timer. C: `timerfd_settime` with a zero value.
    @inline(never)
    package func disarm() throws(SystemError) {
        var spec = itimerspec()
        _ = try systemCall("timerfd_settime") { timerfd_settime(rawValue, 0, &spec, nil) }
    }

    /// Consumes expirations so the descriptor stops polling readable; returns
    /// how many there were (0 if none).
    @inline(never)
    @discardableResult
    package func drain() -> UInt64 { DescriptorIO.drainCounter(rawValue) ?? 0 }
}
