// Harbor — private anonymous memory for copied payloads, recycled by size.
import Glibc

/// Anonymous, process-private memory for payloads Harbor copies: a large
/// `Message(id:payload:)` and a fragmented message reassembled from a socket
/// (Docs/WireFormat.md, "Fragmented messages"). Nobody else can map it, so it
/// may be reused: fresh pages cost a fault and zeroing each (more than the
/// copy itself at 16 MiB and beyond), so freed mappings go back to a small pool
/// keyed by size, `MADV_FREE`d so the kernel may still reclaim them.
///
/// **Thread safety:** any thread (one mutex around the pool's table).
package enum PrivateMemory {
    /// Pooled bytes are capped so a burst of large messages is not kept forever.
    package static let poolLimit = 512 << 20
    /// Mappings smaller than this are not worth the table: malloc-sized.
    private static let smallest = 64 << 10
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    private struct Pool {
        /// Addresses as integers: pointers are not Sendable, and these are
        /// owned by nobody while pooled.
        var free: [Int: [UInt]] = [:]
        var bytes = 0
    }

    private static let pool = HarborLock(Pool())

    /// The size actually mapped for a request of `count` bytes.
    package static func mappedSize(_ count: Int) -> Int {
        (max(count, 1) + pageSize - 1) / pageSize * pageSize
    }

    /// A writable private mapping of at least `count` bytes, reused when one
    /// of that size was freed. C: `mmap(MAP_PRIVATE | MAP_ANONYMOUS)`.
    package static func allocate(_ count: Int) throws(SystemError) -> UnsafeMutableRawPointer {
        let size = mappedSize(count)
        if size >= smallest, let reused = pool.withLock({ pool -> UInt? in
            guard let address = pool.free[size]?.popLast() else { return nil }
            pool.bytes -= size
            return address
        }), let address = UnsafeMutableRawPointer(bitPattern: reused) {
            return address
        }
        guard let address = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              address != MAP_FAILED else {
            throw SystemError(errno: errno, call: "mmap")
        }
        // Huge pages where the system allows them (THP "madvise" is the usual
        // default): a 16 MiB payload is written, copied and read through 8
        // TLB entries instead of 4096, and faulted in 8 times. Measured on
        // the 16 MiB payload benchmark: about 5 % off Harbor's time.
        if size >= 2 << 20 { _ = madvise(address, size, MADV_HUGEPAGE) }
        return address
    }

    /// Pooled bytes up to this total stay as they are; beyond it pooled
    /// mappings are `MADV_FREE`d. Why not all: `MADV_FREE` walks and flushes
    /// every page (measured: about 60 ns a page, a third of a 1 MiB
    /// message's round trip), and a recycled mapping is rewritten at once in
    /// the usual stream of same-sized messages. The budget bounds what a
    /// burst leaves resident.
    package static let residentBudget = 64 << 20

    /// Gives a mapping from ``allocate(_:)`` back: pooled, or unmapped.
    package static func release(_ address: UnsafeMutableRawPointer, count: Int) {
        let size = mappedSize(count)
        enum Fate { case resident, lazilyFreed, unmapped }
        let fate = size < smallest ? .unmapped : pool.withLock { pool -> Fate in
            guard pool.bytes + size <= poolLimit, (pool.free[size]?.count ?? 0) < 2 else { return .unmapped }
            pool.free[size, default: []].append(UInt(bitPattern: address))
            pool.bytes += size
            return pool.bytes <= residentBudget ? .resident : .lazilyFreed
        }
        switch fate {
        case .resident:
            break
        case .lazilyFreed:
            // The contents are garbage now: let the kernel take the pages under
            // pressure instead of swapping them (a later write keeps them).
            _ = madvise(address, size, MADV_FREE)
        case .unmapped:
            _ = munmap(address, size)
        }
    }

    /// Unmaps a mapping from ``allocate(_:)`` at once, never pooling it.
    /// C: `munmap(2)`.
    package static func discard(_ address: UnsafeMutableRawPointer, count: Int) {
        _ = munmap(address, mappedSize(count))
    }
}
