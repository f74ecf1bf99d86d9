// Harbor — the one lock type Harbor's code uses: a pthread mutex guarding a value.
import Glibc

/// A value that only one thread at a time can reach, shaped like
/// `Synchronization.Mutex` (`withLock`, `~Copyable`, `Sendable` for any value
/// handed over with `sending`) and backed by a `pthread_mutex_t`.
///
/// Why not `Mutex`: on Linux it is a futex whose contended path lives in the
/// uninstrumented standard library, so ThreadSanitizer sees no ordering
/// between two threads' critical sections and reported ~220 races on state
/// that was in fact guarded. ThreadSanitizer intercepts `pthread_mutex_*`, so
/// with this lock it checks Harbor's locking instead of drowning in noise,
/// and it also reports lock-order inversions. It costs no more than `Mutex`:
/// uncontended, a lock and unlock took 6-8 ns against Mutex's 19 ns, and
/// creating, locking and dropping one 27-31 ns against 62-66 ns (-O, one
/// thread, best of 7 runs of 10 million, on the 2-CPU build machine).
///
/// The mutex and the value live in one heap allocation: a pthread mutex must
/// not move once initialised, and a `~Copyable` struct may be moved.
/// The mutex is not recursive: locking it again on the same thread deadlocks
/// (ThreadSanitizer reports it as a double lock).
///
/// **Thread safety:** any thread.
@usableFromInline
package struct HarborLock<Value: ~Copyable>: ~Copyable {
    @usableFromInline package let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline package let value: UnsafeMutablePointer<Value>

    /// The value's offset in the allocation: just past the mutex, aligned.
    @inlinable static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<pthread_mutex_t>.stride + alignment - 1) & ~(alignment - 1)
    }

    /// Guards `initialValue`. C: `pthread_mutex_init(3)` with default attributes.
    @inlinable
    package init(_ initialValue: consuming sending Value) {
        // From malloc, not `allocate` (posix_memalign): ``HeapBlock``.
        let base = HeapBlock.allocate(
            byteCount: Self.valueOffset + MemoryLayout<Value>.size,
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<Value>.alignment))
        mutex = base.bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        value = (base + Self.valueOffset).bindMemory(to: Value.self, capacity: 1)
        value.initialize(to: initialValue)
    }

    @inlinable
    deinit {
        value.deinitialize(count: 1)
        pthread_mutex_destroy(mutex)
        HeapBlock.deallocate(UnsafeMutableRawPointer(mutex))
    }

    /// Runs `body` with the value while holding the lock, and returns its result.
    /// C: `pthread_mutex_lock(3)`, `pthread_mutex_unlock(3)`.
    // Asked to inline, but from other modules most calls still reach the
    // unspecialised generic form (the result and error through witness
    // tables, the body through a reabstraction thunk): a hot path uses
    // `withLockedValue` instead.
    @inlinable @inline(__always)
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

/// Locks a ``HarborLock``'s `mutex`, for a module's own wrapper over one
/// concrete value (`PortCore.Guarded`, the transport's pump buffers): from
/// another module a call of the generic `withLock` over a noncopyable value
/// is not specialised, and pays a thunk, a closure context and their
/// retains on every call (measured on the cross-process round trip), where
/// reading `mutex` and `value` of a concrete lock is a load.
@inlinable @inline(__always)
package func lockMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) { pthread_mutex_lock(mutex) }

/// Unlocks what ``lockMutex(_:)`` locked.
@inlinable @inline(__always)
package func unlockMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) { pthread_mutex_unlock(mutex) }

extension HarborLock where Value: ~Copyable {
    /// `withLock` for a body that does not throw and returns a copyable
    /// result: the run loop's hot paths. The general form, generic over a
    /// noncopyable result and a typed error, stayed an unspecialised call
    /// from other modules despite `@inline(__always)` (a metadata lookup and
    /// a reabstraction thunk on every lock); this one inlines.
    @inlinable @inline(__always)
    package borrowing func withLockedValue<Result>(_ body: (inout sending Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&value.pointee)
    }
}

// @unchecked: the value is reached only inside `withLock`, between
// pthread_mutex_lock and pthread_mutex_unlock on `mutex`, and it enters and
// leaves through `sending`, as with `Synchronization.Mutex`.
extension HarborLock: @unchecked Sendable where Value: ~Copyable {}
