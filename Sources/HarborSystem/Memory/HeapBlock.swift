// Harbor — small blocks from malloc, without the runtime's aligned path.
import Glibc

/// Raw heap blocks for storage that lives as long as an object and must
/// not move (a lock's mutex and value, a counter's private words).
///
/// Why not `UnsafeMutableRawPointer.allocate`: on Linux the standard
/// library passes any alignment up to 16 to the runtime as "default",
/// which takes `posix_memalign` (about 60 more instructions than `malloc`
/// per block, measured with callgrind), where `malloc` already returns
/// blocks aligned to 16 bytes on 64-bit glibc. A larger alignment still
/// takes `posix_memalign`; either block is freed with `free`.
///
/// **Thread safety:** any thread.
@usableFromInline
package enum HeapBlock {
    /// What `malloc` guarantees on 64-bit glibc.
    @inlinable static var mallocAlignment: Int { 16 }

    /// `byteCount` uninitialised bytes aligned to `alignment` (a power of
    /// two); never nil (out of memory stops the process, as Swift's
    /// allocations do). C: `malloc(3)`, `posix_memalign(3)`.
    @inlinable
    package static func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        var block: UnsafeMutableRawPointer?
        if alignment <= mallocAlignment {
            block = malloc(max(byteCount, 1))
        } else if posix_memalign(&block, alignment, max(byteCount, 1)) != 0 {
            block = nil
        }
        guard let block else { fatalError("out of memory for a \(byteCount)-byte block") }
        return block
    }

    /// Frees a block from ``allocate(byteCount:alignment:)``. C: `free(3)`.
    @inlinable
    package static func deallocate(_ block: UnsafeMutableRawPointer) { free(block) }
}
