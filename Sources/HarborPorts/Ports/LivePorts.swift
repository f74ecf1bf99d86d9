// Harbor — every live port of this process, for introspection (`harbor ports`).
import HarborSystem

/// The ports of this process: what `harbor ports PID` reports (``PortReport``).
///
/// The table holds no reference a port can feel: an unretained pointer per
/// port, in a slot the port takes once it is whole and empties first thing
/// in its `deinit`. A reading happens under the
/// table's lock, so a port whose `deinit` has begun either is gone from the
/// table or waits in ``remove(_:)`` until the reading is over, its memory
/// valid throughout. No weak reference: a weakly referenced object gets a
/// side table, and every later retain and release of it takes the
/// runtime's slow path. No hashing either: a slot is an index, and emptied
/// slots are reused.
///
/// **Cost:** a port takes the lock twice in its life (add, remove), each an
/// array store; nothing per message or per right. A
/// reading holds the lock while it reads each port.
/// **Thread safety:** any thread.
package enum LivePorts {
    /// A port's pointer, kept without a reference (see the type's comment).
    private struct Entry: @unchecked Sendable {
        // @unchecked: dereferenced only under `table`'s lock, while the port
        // is in the table (its deinit removes it under the same lock first).
        let core: Unmanaged<PortCore>
    }

    /// The slots (nil: free) and the free ones.
    private struct Table {
        var slots: [Entry?] = []
        var free: [Int] = []
        var count = 0
    }

    private static let table = HarborLock(Table())

    /// `core`, made, in a free slot: returns the slot, for ``remove(_:)``.
    package static func add(_ core: PortCore) -> Int {
        table.withLock { table in
            table.count += 1
            let entry = Entry(core: .passUnretained(core))
            if let slot = table.free.popLast() {
                table.slots[slot] = entry
                return slot
            }
            table.slots.append(entry)
            return table.slots.count - 1
        }
    }

    /// The port in `slot` is going (first thing in its `deinit`).
    package static func remove(_ slot: Int) {
        table.withLock { table in
            table.count -= 1
            table.slots[slot] = nil
            table.free.append(slot)
        }
    }

    /// How many ports are live.
    package static var count: Int { table.withLock { $0.count } }

    /// `read` of each live port, by name, at most `limit` of them (the lowest
    /// names), and how many there are in all. `read` runs under the table's
    /// lock (ports being made or dropped on other threads wait) and must not
    /// keep the port.
    package static func reading<Row: Sendable>(limit: Int, _ read: (PortCore) -> Row) -> (rows: [Row], total: Int) {
        table.withLock { table in
            var live: [(name: UInt64, core: Unmanaged<PortCore>)] = []
            live.reserveCapacity(table.count)
            for case let entry? in table.slots {
                live.append((entry.core._withUnsafeGuaranteedRef { $0.name.rawValue }, entry.core))
            }
            live.sort { $0.name < $1.name }
            let rows = live.prefix(limit).map { $0.core._withUnsafeGuaranteedRef { read($0) } }
            return (rows, table.count)
        }
    }
}
