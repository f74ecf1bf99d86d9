// Harbor — a pthread mutex and its condition variable, made and destroyed together.
import Glibc

/// A pthread mutex and a condition variable on the heap, where pthread
/// objects must stay (they may not move), made and destroyed together: what
/// ``Gate`` and ``Parker`` block on. With `monotonic`, the condition's timed
/// waits run on `CLOCK_MONOTONIC`, so a wall-clock change never stretches one.
struct MutexCondition: ~Copyable {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init(monotonic: Bool = false) {
        pthread_mutex_init(mutex, nil)
        guard monotonic else {
            pthread_cond_init(condition, nil)
            return
        }
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
}
