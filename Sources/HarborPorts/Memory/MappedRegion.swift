// Harbor — an out-of-line region: a sealed memfd mapped read-only, or a private copy.
import Glibc  // constants only: EPERM, EFBIG
import Synchronization
import SystemPackage
import HarborSystem

/// The bytes of one out-of-line region, which nobody can change any more.
///
/// Either a read-only mapping of a memfd sealed against writing and
/// shrinking (shared with its sender, who can neither write it nor cut it
/// short under the mapping; this is how `OutOfLineBuffer` payloads arrive,
/// P08, the kernel's copy-on-write standing in for Mach's virtual copy), or
/// private anonymous memory holding a copy that only this process maps (a
/// large `Message(id:payload:)`, or a fragmented message reassembled from a
/// socket). The private kind has no descriptor; crossing a process it is
/// copied through the socket in fragments.
///
/// `F_SEAL_WRITE` is required of a memfd; `F_SEAL_FUTURE_WRITE` is not
/// accepted in its place: it stops new writes but not a shared writable
/// mapping the sender already holds. `F_SEAL_WRITE` cannot be added while
/// such a mapping exists (`EBUSY`), so its presence proves there is none.
///
/// **Thread safety:** immutable once made; any thread.
@usableFromInline
package final class MappedRegion: @unchecked Sendable {
    // @unchecked: the bytes are read-only (sealed memfd) or written only by
    // the creator before the region is shared (private copy).
    /// The sealed memfd; nil for a private copy.
    package let descriptor: SharedDescriptor?
    package let count: Int
    private let address: UnsafeMutableRawPointer?
    /// False once the region must not go back to the private pool (the
    /// unfinished message of a peer: see `discardWhenFreed`).
    private let recyclable = Atomic<Bool>(true)

    /// The seals a received memfd must carry, all of them.
    package static let requiredSeals = MemoryFile.allSeals

    /// Whether `error` (thrown by `init`) means the seals were insufficient.
    package static func isUnsealed(_ error: SystemError) -> Bool {
        error.call == unsealedCall && error.code == EPERM
    }

    /// Whether `error` (thrown by `init(sealed:limit:)`) means the memfd was over the limit.
    package static func isTooLarge(_ error: SystemError) -> Bool {
        error.call == tooLargeCall && error.code == EFBIG
    }

    private static let unsealedCall = "memfd seals"
    private static let tooLargeCall = "memfd size"

    /// Maps `descriptor` after checking its seals and that it holds at most `limit` bytes.
    package init(sealed descriptor: SharedDescriptor, limit: Int) throws(SystemError) {
        let seals = try MemoryFile.seals(descriptor.rawValue)
        guard seals & Self.requiredSeals == Self.requiredSeals else {
            throw SystemError(errno: EPERM, call: "memfd seals")
        }
        let size = try MemoryFile.size(descriptor.rawValue)
        guard size <= limit else { throw SystemError(Errno(rawValue: EFBIG), call: Self.tooLargeCall) }
        self.descriptor = descriptor
        self.count = size
        address = size == 0 ? nil : try MemoryFile.map(descriptor.rawValue, size: size, writable: false)
    }

    /// Private memory of `count` bytes for the creator to fill through
    /// ``privateBytes`` before anyone else sees the region.
    package init(privateCount count: Int) throws(SystemError) {
        descriptor = nil
        self.count = count
        address = count == 0 ? nil : try PrivateMemory.allocate(count)
    }

    /// A private copy of `bytes`.
    package convenience init(copying bytes: UnsafeRawBufferPointer) throws(SystemError) {
        try self.init(privateCount: bytes.count)
        if let base = bytes.baseAddress, let address { address.copyMemory(from: base, byteCount: bytes.count) }
    }

    deinit {
        guard let address else { return }
        if descriptor == nil {
            if recyclable.load(ordering: .acquiring) {
                PrivateMemory.release(address, count: count)
            } else {
                PrivateMemory.discard(address, count: count)
            }
        } else {
            MemoryFile.unmap(address, size: count)
        }
    }

    /// Unmaps a private region when it is freed instead of pooling it: a
    /// fragmented message that never finished was filled by a peer that may
    /// be gone, and pooled its pages would stay resident (P12).
    package func discardWhenFreed() { recyclable.store(false, ordering: .releasing) }

    /// The bytes, valid while `self` lives.
    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: address, count: count) }

    /// A private region's bytes, for its creator to fill before sharing it.
    package var privateBytes: UnsafeMutableRawBufferPointer {
        precondition(descriptor == nil, "a sealed region is read-only")
        return UnsafeMutableRawBufferPointer(start: address, count: count)
    }

    /// The same bytes in a sealed memfd (for a private region that must
    /// travel as a descriptor: inside a moved receive right's queue).
    package func sealedCopy() throws(SystemError) -> MappedRegion {
        if descriptor != nil { return self }
        let file = try MemoryFile.create(name: "harbor-ool")
        try MemoryFile.setSize(file.rawValue, count)
        if count > 0 {
            let target = try MemoryFile.map(file.rawValue, size: count, writable: true)
            target.copyMemory(from: address!, byteCount: count)
            MemoryFile.unmap(target, size: count)
        }
        try MemoryFile.addSeals(file.rawValue, MemoryFile.allSeals)
        return try MappedRegion(sealed: file, limit: Int.max)
    }
}
