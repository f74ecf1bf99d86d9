// Harbor — a fixed, process-wide table of mutexes picked by key: a lock for each of very many small objects without a mutex each.
import CHarborLinux
import Glibc

/// 256 pthread mutexes shared by the whole process, one per cache line,
/// initialised statically in the C shim (`charbor_lock_stripes`).
///
/// For objects too many and too small to own a lock (the run loop's timers):
/// each picks a stripe from its address, and two objects may share one,
/// which costs only contention as long as no code holds one stripe while
/// taking another. ThreadSanitizer sees pthread mutexes, so it still checks
/// every access they guard.
///
/// **Cost:** a lock and unlock, inlined: no allocation, no retain, no lazy
/// initialisation (a Swift global table would cost a `swift_once` call on
/// every access).
/// **Thread safety:** any thread. Not recursive: a body must not take a
/// stripe again.
@usableFromInline
package enum StripedLocks {
    /// Stripes in the table; an index is taken modulo this.
    package static var count: Int { Int(CHARBOR_LOCK_STRIPES) }

    /// Runs `body` while holding stripe `index % count`.
    /// C: `pthread_mutex_lock(3)`, `pthread_mutex_unlock(3)`.
    @inlinable @inline(__always)
    package static func withStripe<Result>(_ index: UInt, _ body: () -> Result) -> Result {
        let mutex: UnsafeMutablePointer<pthread_mutex_t> = charbor_lock_stripe(UInt32(truncatingIfNeeded: index))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
