// Harbor — naming a port across processes, and finding it again on arrival.
import Glibc
import Synchronization

/// A port's identity on the wire: the creating process's random nonce and
/// the port's number there. It identifies without granting anything; a
/// process that receives a right to a port it already knows maps it to the
/// same ``PortName``, so `SendRight` equality holds across processes.
package struct PortIdentity: Hashable, Sendable {
    package var origin: UInt64
    package var number: UInt64

    package init(origin: UInt64, number: UInt64) {
        self.origin = origin
        self.number = number
    }

    /// The identity of a port created in this process.
    package static func local(_ name: PortName) -> PortIdentity {
        PortIdentity(origin: processNonce, number: name.rawValue)
    }

    /// Random per process, so identities from different processes never clash.
    package static let processNonce: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next() | 1
    }()
}

/// Process-wide map from port identities to the local object standing for
/// the port: the receiving port itself, or a proxy that forwards to another
/// process. Entries are weak; names are kept so a port seen again later
/// gets the same name.
package enum PortRegistry {
    private struct Entry {
        var name: PortName
        weak var core: PortCore?
    }

    private static let entries = Mutex<[PortIdentity: Entry]>([:])

    /// Records `core` as the object standing for its identity.
    package static func register(_ core: PortCore) {
        entries.withLock { $0[core.identity] = Entry(name: core.name, core: core) }
    }

    /// The live object for `identity`, or the name to give a new one.
    package static func lookUp(_ identity: PortIdentity) -> (core: PortCore?, name: PortName) {
        entries.withLock { table in
            if let entry = table[identity] { return (entry.core, entry.name) }
            let name = identity.origin == PortIdentity.processNonce
                ? PortName(rawValue: identity.number) : PortName.next()
            table[identity] = Entry(name: name, core: nil)
            return (nil, name)
        }
    }
}
