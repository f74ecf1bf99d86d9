// Harbor — a one-shot wake-up for a thread blocked on a full queue.
import CHarborLinux
import Glibc

/// Lets one thread sleep until another unparks it or a deadline passes.
///
/// Used only on the slow path (a sender waiting for room in a full queue), so
/// it is allocated per wait. Built on a futex-backed pthread condition on
/// `CLOCK_MONOTONIC`, so a wall-clock change never stretches a timeout.
///
/// **Thread safety:** `unpark` from any thread; `park` from the owning thread.
package final class Parker: @unchecked Sendable {
    // @unchecked: `permit` is only touched between pthread_mutex_lock and
    // pthread_mutex_unlock on `waiting.mutex`; the pointers never change.
    private let waiting = MutexCondition(monotonic: true)
    private var permit = false

    package init() {}

    /// Sleeps until unparked (returns true) or the deadline passes (false).
    /// Consumes the wake-up: a parker reused for a second wait sleeps again.
    /// (Not consuming it once let a re-registered sender spin and leave stale
    /// entries in a port's waiter list, so a later sender was never woken.)
    package func park(until deadline: WaitDeadline) -> Bool {
        pthread_mutex_lock(waiting.mutex)
        defer {
            permit = false
            pthread_mutex_unlock(waiting.mutex)
        }
        while !permit {
            switch deadline {
            case .never:
                pthread_cond_wait(waiting.condition, waiting.mutex)
            case .immediately:
                return false
            case .at(let instant):
                var spec = instant.asTimespec
                if pthread_cond_timedwait(waiting.condition, waiting.mutex, &spec) == ETIMEDOUT { return permit }
            }
        }
        return true
    }

    /// Wakes the parked thread, or makes its next `park` return at once.
    package func unpark() {
        pthread_mutex_lock(waiting.mutex)
        permit = true
        pthread_cond_signal(waiting.condition)
        pthread_mutex_unlock(waiting.mutex)
    }
}
