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
    // @unchecked: `mutex`, `condition` and `permit` are only touched between
    // pthread_mutex_lock and pthread_mutex_unlock on `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var permit = false

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Sleeps until unparked (returns true) or the deadline passes (false).
    /// Consumes the wake-up: a parker reused for a second wait sleeps again.
    /// (Not consuming it once let a re-registered sender spin and leave stale
    /// entries in a port's waiter list, so a later sender was never woken.)
    package func park(until deadline: WaitDeadline) -> Bool {
        pthread_mutex_lock(mutex)
        defer {
            permit = false
            pthread_mutex_unlock(mutex)
        }
        while !permit {
            switch deadline {
            case .never:
                pthread_cond_wait(condition, mutex)
            case .immediately:
                return false
            case .at(let instant):
                var spec = instant.asTimespec
                if pthread_cond_timedwait(condition, mutex, &spec) == ETIMEDOUT { return permit }
            }
        }
        return true
    }

    /// Wakes the parked thread, or makes its next `park` return at once.
    package func unpark() {
        pthread_mutex_lock(mutex)
        permit = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}
