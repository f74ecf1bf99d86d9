// Harbor — a sealed memfd mapped read-only: memory nobody can change any more.
import CHarborLinux
import Glibc

/// A read-only mapping of a memfd sealed against writing, shrinking,
/// growing and further sealing, so neither the sender nor anyone else can
/// change the bytes (or cut the file short under the mapping, which would
/// raise SIGBUS). This is how large payloads arrive (P08): the kernel's
/// copy-on-write stands in for Mach's virtual copy.
///
/// `F_SEAL_WRITE` is required; `F_SEAL_FUTURE_WRITE` is not accepted in its
/// place: it stops new writes but not a shared writable mapping the sender
/// already holds, through which the bytes could still change after sending.
/// `F_SEAL_WRITE` cannot be added while such a mapping exists (`EBUSY`), so
/// its presence proves there is none.
///
/// **Thread safety:** immutable; any thread.
package final class MappedRegion: @unchecked Sendable {
    // @unchecked: the mapping is read-only and immutable for the object's life.
    package let descriptor: SharedDescriptor
    package let count: Int
    private let address: UnsafeMutableRawPointer?

    /// The seals a received memfd must carry, all of them.
    package static let requiredSeals = charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW
        | charbor_F_SEAL_SEAL

    /// Whether `error` (thrown by `init`) means the seals were insufficient.
    package static func isUnsealed(_ error: SystemError) -> Bool {
        error.call == unsealedCall && error.code == EPERM
    }

    private static let unsealedCall = "memfd seals"

    /// Maps `descriptor` after checking its seals and that it holds at most `limit` bytes.
    package init(sealed descriptor: SharedDescriptor, limit: Int) throws(SystemError) {
        let seals = try MemoryFile.seals(descriptor.rawValue)
        guard seals & Self.requiredSeals == Self.requiredSeals else {
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
