// Harbor — every live port of this process, for introspection (`harbor ports`).
import HarborSystem

/// The ports of this process: what `harbor ports PID` reports (``PortReport``).
///
/// The table holds no reference a port can feel: an unretained pointer per
/// port, added when the port is made and removed first thing in its
/// `deinit`. A reading happens under the table's lock, so a port whose
/// `deinit` has begun either is gone from the table or waits in
/// ``remove(_:)`` until the reading is over, its memory valid throughout.
/// No weak reference: a weakly referenced object gets a side table, and
/// every later retain and release of it takes the runtime's slow path.
///
/// **Cost:** a port registers once when it is made and leaves once when it
/// goes (one lock and a hash-table insert or removal each); nothing per
/// message or per right. A reading holds the lock while it reads each port.
/// **Thread safety:** any thread.
package enum LivePorts {
    /// A port's pointer, kept without a reference (see the type's comment).
    private struct Entry: @unchecked Sendable {
        // @unchecked: dereferenced only under `table`'s lock, while the port
        // is in the table (its deinit removes it under the same lock first).
        let core: Unmanaged<PortCore>
    }

    private static let table = HarborLock<[UInt64: Entry]>([:])

    /// `core` was made.
    package static func register(_ core: PortCore) {
        table.withLock { $0[core.name.rawValue] = Entry(core: .passUnretained(core)) }
    }

    /// The port named `name` is going (first thing in its `deinit`).
    package static func remove(_ name: PortName) {
        _ = table.withLock { $0.removeValue(forKey: name.rawValue) }
    }

    /// How many ports are live.
    package static var count: Int { table.withLock { $0.count } }

    /// `read` of each live port, by name, at most `limit` of them (the lowest
    /// names), and how many there are in all. `read` runs under the table's
    /// lock (ports being made or dropped on other threads wait) and must not
    /// keep the port.
    package static func reading<Row: Sendable>(limit: Int, _ read: (PortCore) -> Row) -> (rows: [Row], total: Int) {
        table.withLock { table in
            let names = table.keys.sorted().prefix(limit)
            let rows = names.map { name in table[name]!.core._withUnsafeGuaranteedRef { read($0) } }
            return (rows, table.count)
        }
    }
}
