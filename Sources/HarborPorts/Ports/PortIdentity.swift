// Harbor — naming a port across processes, and finding it again on arrival.
import HarborSystem

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

/// Process-wide map from port identities to the local objects standing for
/// them (the receiving port itself, or proxies that forward to another
/// process), so a right that comes back finds its port again and
/// `SendRight` equality holds across processes.
///
/// An identity arrives in a peer's bytes and proves nothing (P11), so it is
/// only half of a key. The other half is what the right's descriptors
/// prove, as the kernel reports them: the port's slot counter file (every
/// right to the port carries that memfd; its inode cannot be named without
/// holding it) and, for a proxy, the process that made its connection
/// (`SO_PEERCRED`: a look-alike connection made by a process that merely
/// holds a send right is never merged with the real one). A receive right
/// proves more: see `PortCore.importReceiveRight`.
///
/// Entries do not keep their ports alive (``UnretainedReference``: this
/// table is the ports' own weak table) and a port's `deinit` prunes its
/// identity's records, so identities a peer invents cost nothing once the
/// rights carrying them are gone.
package enum PortRegistry {
    /// An identity with its hash, computed once (`Hasher`: SipHash under
    /// the process's random seed, so a peer choosing identities cannot
    /// choose their buckets) and reused by every table operation on it: an
    /// import looks it up and registers it with one hash, and a removal
    /// that moves other records in the table costs no hash of theirs.
    package struct Key: Hashable, Sendable {
        package let identity: PortIdentity
        private let hash: Int

        package init(_ identity: PortIdentity) {
            self.identity = identity
            var hasher = Hasher()
            hasher.combine(identity)
            hash = hasher.finalize()
        }

        package static func == (lhs: Key, rhs: Key) -> Bool { lhs.identity == rhs.identity }
        package func hash(into hasher: inout Hasher) { hasher.combine(hash) }
        /// The stored hash, mixed with the table's seed: what `Dictionary`
        /// asks of a key (its default hashes again through `hash(into:)`).
        package func _rawHashValue(seed: Int) -> Int { hash ^ seed }
    }

    private struct Entry {
        /// Unretained: the port's `deinit` removes this record (`prune`)
        /// before its memory goes, and every read is under the table's lock.
        let core: UnretainedReference<PortCore>
        /// The file of the port's slot counter.
        let slots: FileKey
        /// Whether `core` is a proxy, whose connection's maker is part of
        /// the key (asked of the kernel when a right with the same slot
        /// counter arrives, then kept by its route); false for a port
        /// received here.
        let isProxy: Bool

        /// Whether this record is of `core` or of a port that is gone; a
        /// live port read is kept in `alive`.
        func isGone(or core: PortCore?, keeping alive: inout [PortCore]) -> Bool {
            if let core, self.core.points(to: core) { return true }
            guard let live = self.core.retainedIfLive() else { return true }
            alive.append(live)
            return false
        }
    }

    /// An identity's records: almost always one (one port here per
    /// identity), held without an array; any others in `more`.
    private struct Records {
        var first: Entry
        var more: [Entry] = []

        /// Each record, `first` then `more`.
        func forEach<Failure: Error>(_ body: (Entry) throws(Failure) -> Void) throws(Failure) {
            try body(first)
            for entry in more { try body(entry) }
        }

        /// Drops the records of ports gone or of `core`; false if none is left.
        mutating func removeGone(or core: PortCore?, keeping alive: inout [PortCore]) -> Bool {
            if !more.isEmpty { more.removeAll { $0.isGone(or: core, keeping: &alive) } }
            guard first.isGone(or: core, keeping: &alive) else { return true }
            guard !more.isEmpty else { return false }
            first = more.removeFirst()
            return true
        }
    }

    private static let entries = HarborLock<[Key: Records]>([:])

    /// Records `core` as standing for its identity, keyed by the descriptors
    /// it holds now (its transport's slot counter, or its route's counter
    /// and connection). Replaces an earlier record of the same object.
    /// Does nothing for a port without a slot counter (a send-once proxy).
    /// - Parameter known: the key of that slot counter's file, when the
    ///   caller has just asked the kernel for it (`FileKey(of:)`).
    package static func register(_ core: PortCore, slots known: FileKey? = nil) {
        let held = core.state.withGuarded { guarded -> (slots: CInt, isProxy: Bool)? in
            if let route = guarded.route {
                guard let slots = route.slots else { return nil }
                return (slots.descriptor.rawValue, true)
            }
            guard let transport = guarded.transport else { return nil }
            return (transport.slots.descriptor.rawValue, false)
        }
        // The descriptors live as long as the route or transport: the
        // object holding them is kept by `core`, which the caller holds.
        guard let held, let slots = known ?? (try? FileKey(of: held.slots)) else { return }
        register(core, key: Key(core.identity), slots: slots, isProxy: held.isProxy)
    }

    /// Records `core` as standing for its identity, with its slot counter's
    /// file already asked of the kernel by the caller (an import).
    /// - Parameters:
    ///   - key: `core`'s identity, hashed (the one the import looked up).
    ///   - isProxy: whether `core` is a proxy (its connection's maker is
    ///     asked of the kernel only when another right carrying the same
    ///     counter arrives: `lookUp`).
    package static func register(_ core: PortCore, key: Key, slots: FileKey, isProxy: Bool) {
        let entry = Entry(core: UnretainedReference(core), slots: slots, isProxy: isProxy)
        withEntries { table, alive in
            // One access to the records in place (a value read out of the
            // table and written back is copied).
            guard let index = table.index(forKey: key) else {
                table[key] = Records(first: entry)
                return
            }
            if table.values[index].removeGone(or: core, keeping: &alive) {
                table.values[index].more.append(entry)
            } else {
                table.values[index].first = entry
            }
        }
    }

    /// What this process knows of a send right's port, from the facts its
    /// descriptors prove: `port`, the port it stands for (the receiving port
    /// itself when the right carries its slot counter, or a proxy holding
    /// the same counter through a connection made by the same process);
    /// `isForged`, whether live ports or proxies stand for the identity
    /// here, none of them with `slots` (a right naming a known port without
    /// its counter).
    /// - Parameter creator: the process that made the arriving right's
    ///   connection (`SO_PEERCRED`); asked only when a proxy here holds the
    ///   same slot counter, so a right to a port new here costs no question.
    /// - Throws: what `creator` throws.
    package static func lookUp(
        _ key: Key, slots: FileKey, creator: () throws(SystemError) -> Int32
    ) throws(SystemError) -> (port: PortCore?, isForged: Bool) {
        // No array in the common cases (no record, or one): the first
        // record with the counter is held in `first`; every other port read
        // under the lock is kept in `others` until after it (see
        // `withEntries`).
        var first: (core: PortCore, isProxy: Bool)?
        var more: [(core: PortCore, isProxy: Bool)] = []
        var others: [PortCore] = []
        var isForged = false
        entries.withLockedValue { table in
            guard let index = table.index(forKey: key) else { return }
            var anyLive = false
            table.values[index].forEach { entry in
                guard let core = entry.core.retainedIfLive() else { return }
                anyLive = true
                guard entry.slots == slots else {
                    others.append(core)
                    return
                }
                if first == nil { first = (core, entry.isProxy) } else { more.append((core, entry.isProxy)) }
            }
            isForged = anyLive && first == nil
        }
        withExtendedLifetime(others) {}
        guard let first else { return (nil, isForged) }
        // Outside the table's lock (a port's state and a route have locks
        // of their own). A proxy matches only through a connection made by
        // the same process as the arriving one's.
        var asked: Int32?
        func standsFor(_ core: PortCore, isProxy: Bool) throws(SystemError) -> Bool {
            guard isProxy else { return true }
            let mine: Int32
            if let asked { mine = asked } else { mine = try creator(); asked = mine }
            guard let made = try? core.route?.creator() else { return false }
            return made.pid == mine
        }
        guard !more.isEmpty else { return (try standsFor(first.core, isProxy: first.isProxy) ? first.core : nil, false) }
        var matches: [PortCore] = []
        if try standsFor(first.core, isProxy: first.isProxy) { matches.append(first.core) }
        for (core, isProxy) in more where try standsFor(core, isProxy: isProxy) { matches.append(core) }
        return (matches.first { $0.isReceivingHere } ?? matches.first, false)
    }

    /// Every live object standing for `identity`, whatever its descriptors.
    package static func everyPort(_ identity: PortIdentity) -> [PortCore] {
        withEntries { table, alive in
            table[Key(identity)]?.forEach { entry in
                if let core = entry.core.retainedIfLive() { alive.append(core) }
            }
            return alive
        }
    }

    /// Drops `core`'s record and those of other ports of its identity that
    /// are gone. Called by `core`'s `deinit`: once it returns, no record
    /// points to `core`'s memory.
    package static func prune(_ key: Key, leaving core: PortCore) {
        withEntries { table, alive in
            guard let index = table.index(forKey: key) else { return }
            // In place: a value read out of the table and written back is copied.
            if !table.values[index].removeGone(or: core, keeping: &alive) { table.remove(at: index) }
        }
    }

    /// How many records `identity` has, of live ports or not (tests: a
    /// port's prune leaves no record of it).
    package static func recordCount(_ identity: PortIdentity) -> Int {
        entries.withLockedValue { table in table[Key(identity)].map { 1 + $0.more.count } ?? 0 }
    }

    /// How many identities are recorded: bounded by the live ports.
    package static var count: Int { entries.withLockedValue { $0.count } }

    /// Runs `body` under the lock. Reading a record retains its port, and
    /// should that be the last reference, the port's `deinit` (which
    /// prunes, taking this lock) would run inside the lock: so every port
    /// read is kept in `alive` and released only after unlocking.
    private static func withEntries<Result>(
        _ body: (inout [Key: Records], inout [PortCore]) -> Result
    ) -> Result {
        var alive: [PortCore] = []
        let result = entries.withLockedValue { table in body(&table, &alive) }
        alive.removeAll()
        return result
    }
}
