// Harbor — every live port of this process, weakly, for introspection (`harbor ports`).
import HarborSystem

/// The ports of this process, as weak references: what `harbor ports PID`
/// reports (``PortReport``).
///
/// **Cost:** a port registers once when it is made and leaves once when it
/// goes (one uncontended lock each); nothing per message or per right. A
/// snapshot takes the lock once and holds each port only while it is read.
/// **Thread safety:** any thread.
package enum LivePorts {
    private struct Weak {
        weak var core: PortCore?
    }

    private static let table = HarborLock<[UInt64: Weak]>([:])

    /// `core` was made.
    package static func register(_ core: PortCore) {
        table.withLock { $0[core.name.rawValue] = Weak(core: core) }
    }

    /// The port named `name` is gone (from its `deinit`).
    package static func remove(_ name: PortName) {
        _ = table.withLock { $0.removeValue(forKey: name.rawValue) }
    }

    /// How many ports are live.
    package static var count: Int { table.withLock { $0.count } }

    /// The live ports, by name, at most `limit` of them (the lowest names),
    /// and how many there are in all.
    package static func snapshot(limit: Int) -> (ports: [PortCore], total: Int) {
        let (names, total) = table.withLock { table -> ([UInt64], Int) in
            (table.keys.sorted().prefix(limit).map { $0 }, table.count)
        }
        // Strong references are taken one at a time, outside the lock: a
        // port whose deinit already began reads as nil.
        let ports = names.compactMap { name in table.withLock { $0[name]?.core } }
        return (ports, total)
    }
}
