// Harbor — which loop and which modes an item has been added to.
import HarborPorts

/// Where an item is scheduled in one loop. Sources keep one per loop they
/// are in (``Memberships``), observers at most one, each under the item's
/// own small lock so that `invalidate()` on any thread can find its loops.
///
/// Lock order: a loop's lock, then an item's lock — never the other way
/// round. Item methods take their own lock, let it go, and only then call
/// into the loop.
struct Membership: Sendable {
    /// The loop this membership is in, until it is released.
    var loop: Loop? { reference?.loop }
    private var reference: LoopReference?
    /// The loop's identity, compared without loading the weak reference (a
    /// load touches its side table: a cache miss per ready source).
    private(set) var loopID: ObjectIdentifier?
    /// The real modes the item is in (never `.common`).
    var modes: Set<LoopMode> = []
    /// Whether the item was added "for common", and so joins modes that are
    /// added to the common set later.
    var isCommon = false
    /// The token its epoll registrations in this loop carry (waitset
    /// sources): a slot of the loop's table, held while the item is in one
    /// of the loop's modes.
    var token: WaitToken?

    var isScheduled: Bool { !modes.isEmpty || isCommon }

    /// Whether the item is in `mode`. An item in one mode (most are) has
    /// its mode's name compared, not hashed: this runs once per ready
    /// source a pass, and hashing the name is most of its cost.
    func isIn(_ mode: LoopMode) -> Bool {
        if modes.count == 1, let only = modes.first { return only == mode }
        return modes.contains(mode)
    }

    /// No loop: an item that is in none.
    init() {}

    /// An item's (still empty) membership in `loop`.
    init(in loop: Loop) {
        reference = LoopReference(loop)
        loopID = ObjectIdentifier(loop)
    }
}

/// Any item a mode can hold, so add/remove/common-mode fan-out are written
/// once. Timers are not items: they keep their own placements and reach
/// the loop through `Timers/Loop+Timers.swift`.
enum LoopItem {
    case source(LoopSource)
    /// A port, descriptor, process or signal source: one kind (``WaitsetSource``).
    case waitset(any WaitsetSource)
    case observer(LoopObserver)

    var identity: ObjectIdentifier {
        switch self {
        case .source(let item): ObjectIdentifier(item)
        case .waitset(let item): ObjectIdentifier(item)
        case .observer(let item): ObjectIdentifier(item)
        }
    }

    /// Reads or changes the item's membership in `loop` under the item's
    /// lock (see ``Memberships/withMembership(in:_:)``).
    func withMembership<R: Sendable>(in loop: Loop, _ body: (inout Membership) -> R) -> R {
        switch self {
        case .source(let item): item.membership.withLock { $0.withMembership(in: loop, body) }
        case .waitset(let item): item.membership.withLock { $0.withMembership(in: loop, body) }
        case .observer(let item): item.membership.withLock { $0.withMembership(in: loop, body) }
        }
    }

    /// Whether the item may not join `loop` because it is in another one:
    /// only observers keep to one loop (CF's do; its sources are in every
    /// loop they were added to).
    func isHeld(elsewhereThan loop: Loop) -> Bool {
        guard case .observer(let item) = self else { return false }
        return item.membership.withLock { $0.isScheduled(elsewhereThan: loop) }
    }

    /// Drops the item's membership in `loop`, which ends (its thread exited).
    func leave(_ loop: Loop) {
        switch self {
        case .source(let item): item.membership.withLock { $0.leave(loop) }
        case .waitset(let item): item.membership.withLock { $0.leave(loop) }
        case .observer(let item): item.membership.withLock { $0.leave(loop) }
        }
    }

    var isValid: Bool {
        switch self {
        case .source(let item): item.isValid
        case .waitset(let item): item.isValid
        case .observer(let item): item.isValid
        }
    }
}
