// Harbor — which loop and which modes an item has been added to.
import HarborPorts

/// Where an item is scheduled. Each item keeps one of these under its own
/// small lock so that `invalidate()` on any thread can find its loop.
///
/// Lock order: a loop's lock, then an item's lock — never the other way
/// round. Item methods take their own lock, let it go, and only then call
/// into the loop.
struct Membership: Sendable {
    /// The loop the item is in; an item belongs to at most one loop at a
    /// time (CF logs and refuses a timer that is already in another loop).
    weak var loop: Loop?
    /// The real modes the item is in (never `.common`).
    var modes: Set<LoopMode> = []
    /// Whether the item was added "for common", and so joins modes that are
    /// added to the common set later.
    var isCommon = false

    var isScheduled: Bool { !modes.isEmpty || isCommon }
}

/// Any item a mode can hold, so add/remove/common-mode fan-out are written once.
enum LoopItem {
    case source(LoopSource)
    case port(PortSource)
    case timer(LoopTimer)
    case observer(LoopObserver)
    case descriptor(DescriptorSource)

    var identity: ObjectIdentifier {
        switch self {
        case .source(let item): ObjectIdentifier(item)
        case .port(let item): ObjectIdentifier(item)
        case .timer(let item): ObjectIdentifier(item)
        case .observer(let item): ObjectIdentifier(item)
        case .descriptor(let item): ObjectIdentifier(item)
        }
    }

    /// Reads or changes the item's membership under the item's lock.
    func withMembership<R: Sendable>(_ body: (inout Membership) -> R) -> R {
        switch self {
        case .source(let item): item.membership.withLock { body(&$0) }
        case .port(let item): item.membership.withLock { body(&$0) }
        case .timer(let item):
            // Timers keep no `Membership` (see Timers/TimerPlacements.swift);
            // this synthesised one serves the loop's teardown, which resets
            // it: leaving no mode drops the placements (no heap is touched —
            // the modes are being released).
            item.state.withLock { state in
                var membership = Membership()
                membership.loop = state.owner
                membership.isCommon = state.isCommon
                membership.modes = Set(item.placements.all.map(\.mode))
                let result = body(&membership)
                if membership.modes.isEmpty { item.placements.removeAll() }
                state.isCommon = membership.isCommon
                state.owner = membership.loop
                return result
            }
        case .observer(let item): item.membership.withLock { body(&$0) }
        case .descriptor(let item): item.membership.withLock { body(&$0) }
        }
    }

    var isValid: Bool {
        switch self {
        case .source(let item): item.isValid
        case .port(let item): item.isValid
        case .timer(let item): item.isValid
        case .observer(let item): item.isValid
        case .descriptor(let item): item.isValid
        }
    }
}
