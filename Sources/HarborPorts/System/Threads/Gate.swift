// Harbor — a one-shot gate: threads wait until another thread opens it.
import Glibc

/// A one-shot gate: ``open()`` from any thread; ``wait()`` blocks until it
/// has been opened, and returns at once ever after. For tools and tests that
/// must order two threads without sleeping.
///
/// **Thread safety:** any thread.
package final class Gate: @unchecked Sendable {
    // @unchecked: `opened` is only touched between pthread_mutex_lock and
    // pthread_mutex_unlock on `mutex`; the pointers never change.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var opened = false

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Opens the gate and wakes every waiter.
    package func open() {
        pthread_mutex_lock(mutex)
        opened = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Blocks until the gate is open.
    package func wait() {
        pthread_mutex_lock(mutex)
        while !opened { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }
}
