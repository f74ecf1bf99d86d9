// Harbor — the mappings of slot counters this process let go, kept a little
// while for the next right to the same port.
import HarborSystem

/// Mappings of adopted slot counters (``SharedSlots``) whose last holder
/// went, kept so that the next send right to the same port adopts the
/// counter without checking its seals and size again, mapping it, and
/// later unmapping it: a process that looks a name up, sends and drops the
/// right, again and again, makes no mapping per right.
///
/// A mapping keeps its file alive (no descriptor is kept), so its key
/// (device and inode, `fstat`) cannot name another file while it is here:
/// a counter adopted with the same key is the same file, whose seals
/// (against shrinking and growing) were checked when it was first mapped
/// and can never be removed. The descriptor the new right brought is kept
/// by the new ``SharedSlots`` as usual.
///
/// **Cost:** at most ``capacity`` pages of address space (the oldest
/// unmapped first); one lock round trip per adoption and per release.
/// **Thread safety:** any thread.
package final class SpareSlotMappings: Sendable {
    /// The process's spare mappings.
    package static let shared = SpareSlotMappings()

    /// Mappings kept at most.
    package static let capacity = 8

    /// A mapping's address, moved between threads under the lock.
    private struct Mapping: @unchecked Sendable {
        let file: FileKey
        let memory: UnsafeMutableRawPointer
    }

    private let spare = HarborLock<[Mapping]>([])

    /// The spare mapping of `file`, taken out of the cache; nil if none.
    func take(_ file: FileKey) -> UnsafeMutableRawPointer? {
        spare.withLock { mappings -> UnsafeMutableRawPointer? in
            guard let index = mappings.firstIndex(where: { $0.file == file }) else { return nil }
            return mappings.remove(at: index).memory
        }
    }

    /// Keeps `memory`, the mapping of `file` (``SharedSlots/size`` bytes),
    /// for a next adoption; unmaps the oldest one kept if full.
    func keep(_ memory: UnsafeMutableRawPointer, of file: FileKey) {
        let evicted = spare.withLock { mappings -> Mapping? in
            mappings.append(Mapping(file: file, memory: memory))
            return mappings.count > Self.capacity ? mappings.removeFirst() : nil
        }
        if let evicted { MemoryFile.unmap(evicted.memory, size: SharedSlots.size) }
    }

    /// Mappings kept now (tests).
    package var count: Int { spare.withLock { $0.count } }
}
