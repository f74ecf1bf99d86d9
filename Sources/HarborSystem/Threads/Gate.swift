// Harbor — a one-shot gate: threads wait until another thread opens it.
import Glibc

/// A one-shot gate: ``open()`` from any thread; ``wait()`` blocks until it
/// has been opened, and returns at once ever after. For tools and tests that
/// must order two threads without sleeping.
///
/// **Thread safety:** any thread.
package final class Gate: @unchecked Sendable {
    // @unchecked: `opened` is only touched between pthread_mutex_lock and
    // pthread_mutex_unlock on `waiting.mutex`; the pointers never change.
    private let waiting = MutexCondition()
    private var opened = false

    package init() {}

    /// Opens the gate and wakes every waiter.
    package func open() {
        pthread_mutex_lock(waiting.mutex)
        opened = true
        pthread_cond_broadcast(waiting.condition)
        pthread_mutex_unlock(waiting.mutex)
    }

    /// Blocks until the gate is open.
    package func wait() {
        pthread_mutex_lock(waiting.mutex)
        while !opened { pthread_cond_wait(waiting.condition, waiting.mutex) }
        pthread_mutex_unlock(waiting.mutex)
    }
}
