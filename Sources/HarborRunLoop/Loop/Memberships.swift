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
/// whose loop was released without ending is dropped when next seen.
///
/// Kept under the item's own lock; entries change only while the lock of
/// their loop is held too (lock order: the loop's, then the item's).
struct Memberships: Sendable {
    /// One entry per loop the item is scheduled in; usually one.
    private var entries: [Membership] = []

    /// The loops the item is scheduled in.
    var loops: [Loop] { entries.compactMap(\.loop) }

    /// Whether the item is scheduled in a loop other than `loop`.
    func isScheduled(elsewhereThan loop: Loop) -> Bool {
        entries.contains { entry in entry.loop.map { $0 !== loop } ?? false }
    }

    /// Whether the item is in `mode` of `loop`.
    func contains(_ mode: LoopMode, in loop: Loop) -> Bool {
        entries.contains { $0.loop === loop && $0.modes.contains(mode) }
    }

    /// The item's membership in `loop` (empty if it is not there).
    func membership(in loop: Loop) -> Membership {
        entries.first { $0.loop === loop } ?? Membership()
    }

    /// Reads or changes the membership in `loop`, made if it is not there
    /// yet; an entry left in no mode and not common is dropped afterwards,
    /// as are entries whose loop was released.
    mutating func withMembership<R>(in loop: Loop, _ body: (inout Membership) -> R) -> R {
        entries.removeAll { $0.loop == nil }
        guard let index = entries.firstIndex(where: { $0.loop === loop }) else {
            var made = Membership()
            made.loop = loop
            let result = body(&made)
            if made.isScheduled { entries.append(made) }
            return result
        }
        let result = body(&entries[index])
        if !entries[index].isScheduled { entries.remove(at: index) }
        return result
    }

    /// Forgets `loop` (which ends): its modes and its slot tables are gone.
    mutating func leave(_ loop: Loop) {
        entries.removeAll { $0.loop == nil || $0.loop === loop }
    }
}
