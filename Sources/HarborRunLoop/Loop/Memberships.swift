// Harbor — the loops a source is in: one `Membership` per loop (RL03, RL09, RL18).

/// Every loop an item has been added to, with its modes there.
///
/// A version-0, port or descriptor source may be in several loops at once,
/// as CF keeps a source in every run loop it was added to (its
/// `_runLoops` bag): a port's or descriptor's readiness then sits in the
/// waitset of each loop's modes, and whichever loop runs first serves it.
/// Observers keep to one loop (`Loop.add` refuses a second), as CF's do;
/// timers keep their own placements (`Timers/TimerPlacements.swift`).
///
/// A loop that ends (its thread exits) drops its entry in each of its
/// items (`Loop.terminate`), so a source whose loop has gone is in no loop
/// and the next loop it is added to serves it, as CF moves it. An entry
/// whose loop was released without ending is dropped at the next change,
/// before a new entry is made (so no stale entry can share a new loop's
/// identity).
///
/// The first loop's entry is kept inline: checking a ready source's mode
/// (`contains(_:in:)`, once per ready source a pass) then reads no
/// further allocation. Kept under the item's own lock; entries change only
/// while the lock of their loop is held too (lock order: the loop's, then
/// the item's).
struct Memberships: Sendable {
    /// The first loop's entry; nil when the item is in no loop.
    private var first: Membership?
    /// The entries of further loops.
    private var others: [Membership] = []

    /// The loops the item is scheduled in.
    var loops: [Loop] { ([first].compactMap { $0?.loop }) + others.compactMap(\.loop) }

    /// Whether the item is scheduled in a live loop other than `loop`.
    func isScheduled(elsewhereThan loop: Loop) -> Bool {
        let id = ObjectIdentifier(loop)
        if first?.loopID != id, first?.loop != nil { return true }
        return others.contains { $0.loopID != id && $0.loop != nil }
    }

    /// Whether the item is in `mode` of `loop`.
    func contains(_ mode: LoopMode, in loop: Loop) -> Bool {
        let id = ObjectIdentifier(loop)
        if first?.loopID == id { return first!.isIn(mode) }
        return others.contains { $0.loopID == id && $0.isIn(mode) }
    }

    /// The item's membership in `loop` (empty if it is not there).
    func membership(in loop: Loop) -> Membership {
        let id = ObjectIdentifier(loop)
        if first?.loopID == id { return first! }
        return others.first { $0.loopID == id } ?? Membership()
    }

    /// Reads or changes the membership in `loop`, made if it is not there
    /// yet; an entry left in no mode and not common is dropped afterwards.
    mutating func withMembership<R>(in loop: Loop, _ body: (inout Membership) -> R) -> R {
        dropReleasedLoops()
        let id = ObjectIdentifier(loop)
        if first?.loopID == id {
            let result = body(&first!)
            if !first!.isScheduled { first = others.isEmpty ? nil : others.removeFirst() }
            return result
        }
        if let index = others.firstIndex(where: { $0.loopID == id }) {
            let result = body(&others[index])
            if !others[index].isScheduled { others.remove(at: index) }
            return result
        }
        var made = Membership(in: loop)
        let result = body(&made)
        if made.isScheduled {
            if first == nil { first = made } else { others.append(made) }
        }
        return result
    }

    /// Forgets `loop` (which ends): its modes and its slot tables are gone.
    mutating func leave(_ loop: Loop) {
        let id = ObjectIdentifier(loop)
        others.removeAll { $0.loopID == id }
        if first?.loopID == id { first = others.isEmpty ? nil : others.removeFirst() }
        dropReleasedLoops()
    }

    /// Drops the entries of loops released without ending.
    private mutating func dropReleasedLoops() {
        if !others.isEmpty { others.removeAll { $0.loop == nil } }
        if first != nil, first?.loop == nil { first = others.isEmpty ? nil : others.removeFirst() }
    }
}
