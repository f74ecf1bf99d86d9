// Harbor — a sealed memfd mapped read-only: memory nobody can change any more.
import CHarborLinux
import Glibc

/// A read-only mapping of a memfd sealed against writing and shrinking, so
/// neither the sender nor anyone else can change the bytes (or cut the file
/// short under the mapping, which would raise SIGBUS). This is how large
/// payloads arrive (P08): the kernel's copy-on-write stands in for Mach's
/// virtual copy.
///
/// **Thread safety:** immutable; any thread.
package final class MappedRegion: @unchecked Sendable {
    // @unchecked: the mapping is read-only and immutable for the object's life.
    package let descriptor: SharedDescriptor
    package let count: Int
    private let address: UnsafeMutableRawPointer?

    /// Maps `descriptor` after checking its seals and that it holds at most `limit` bytes.
    package init(sealed descriptor: SharedDescriptor, limit: Int) throws(SystemError) {
        let seals = try MemoryFile.seals(descriptor.rawValue)
        let required = charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW
        guard seals & required == required,
              seals & (charbor_F_SEAL_WRITE | charbor_F_SEAL_FUTURE_WRITE) != 0 else {
            throw SystemError(errno: EPERM, call: "memfd seals")
        }
        let size = try MemoryFile.size(descriptor.rawValue)
        guard size <= limit else { throw SystemError(errno: EFBIG, call: "memfd size") }
        self.descriptor = descriptor
        self.count = size
        address = size == 0 ? nil : try MemoryFile.map(descriptor.rawValue, size: size, writable: false)
    }

    deinit { if let address { MemoryFile.unmap(address, size: count) } }

    /// The bytes, valid while `self` lives.
    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: address, count: count) }
}
