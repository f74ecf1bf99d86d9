// Harbor — 32-bit words that another thread or process may change at any
// moment: C11 atomics and the futex calls that sleep on a word.
//
// Swift has no atomic view of raw memory it did not allocate as an `Atomic`
// (a shared mapping is such memory), so the operations come from the C shim,
// where `__atomic_*` builtins make them single instructions.
import CHarborLinux
import Glibc  // types only: timespec

/// A run of `Int32` words reached only through sequentially consistent
/// atomics (the one relaxed store says so), for memory shared with other
/// processes (a mapped memfd) or with other threads.
///
/// Every read may see anything a peer wrote: callers treat what they load as
/// a claim, never as a fact (Docs/Security.md).
///
/// **Thread safety:** any thread; the words must stay mapped while it is used.
@usableFromInline
package struct AtomicWords: @unchecked Sendable {
    // @unchecked: a pointer, and every access through it is atomic.
    @usableFromInline let base: UnsafeMutablePointer<Int32>

    /// Views the words at `base`.
    @inlinable
    package init(_ base: UnsafeMutablePointer<Int32>) { self.base = base }

    /// Reads word `index`.
    @inlinable @inline(__always)
    package func load(_ index: Int) -> Int32 { charbor_atomic_load_i32(base + index) }

    /// Writes word `index` with no ordering: for hints that only need to
    /// arrive eventually.
    @inlinable @inline(__always)
    package func storeRelaxed(_ index: Int, _ value: Int32) { charbor_atomic_store_relaxed_i32(base + index, value) }

    /// Adds `delta` to word `index` (wrapping); returns the value before.
    @inlinable @inline(__always)
    @discardableResult
    package func fetchAdd(_ index: Int, _ delta: Int32) -> Int32 { charbor_atomic_fetch_add_i32(base + index, delta) }

    /// Writes `desired` if word `index` holds `expected`; otherwise loads
    /// what it holds into `expected`. Returns whether it wrote.
    @inlinable @inline(__always)
    package func compareExchange(_ index: Int, expected: inout Int32, desired: Int32) -> Bool {
        charbor_atomic_compare_exchange_i32(base + index, &expected, desired)
    }

    /// Wakes every thread (of any process) asleep on word `index`. C: `futex(FUTEX_WAKE)`.
    package func wakeAll(_ index: Int) { _ = charbor_futex_wake(base + index, Int32.max) }

    /// Sleeps while word `index` holds `expected`, until woken, or until
    /// `timeout` passes (a relative time). Returns at once if the word
    /// differs; may return early (a signal, a spurious wake), so callers
    /// look again. C: `futex(FUTEX_WAIT)`.
    package func wait(_ index: Int, whileEquals expected: Int32, timeout: timespec) {
        var timeout = timeout
        _ = charbor_futex_wait(base + index, expected, &timeout)
    }
}
