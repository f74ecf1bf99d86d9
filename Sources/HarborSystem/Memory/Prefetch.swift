// Harbor — asking for a cache line before it is needed.
import CHarborLinux

/// Starts loading the cache line at `address` for writing, and returns at
/// once. A hint: it never faults, and unlike a load it is not held up by the
/// locked instructions (retains, mutexes) between here and the use, so the
/// miss it starts overlaps with the work in between.
/// C: `__builtin_prefetch(address, 1, 3)`.
@inlinable @inline(__always)
package func prefetchForWriting(_ address: UnsafeRawPointer) {
    charbor_prefetch_for_writing(address)
}
