// Harbor — a timer's mutable state, inline in the timer object and guarded by locks the compiler cannot see.
import Synchronization

/// The part of a ``LoopTimer`` the timer engine changes: its placements in
/// the modes' heaps and its dates, validity and owner (`LoopTimer.State`).
///
/// Both live inline in the timer object, in a `Synchronization._Cell` (the
/// storage `Mutex` keeps its value in: raw memory reached through its
/// address), so a timer is one allocation, with no exclusivity check around
/// each access, while ``LoopTimer`` itself holds only `let`s and is checked
/// `Sendable` by the compiler. The unchecked part is here, internal, with
/// the locks that make it safe:
///
/// - `placements`: read and written only under the lock of the loop in
///   `state.owner` (the heaps that write positions into it are that
///   loop's), or by that loop's teardown once it is marked terminated;
/// - `state`: read and written only through `LoopTimer.state.withLock`,
///   under the timer's lock stripe (`TimerLockStripes`).
///
/// Field order: placements first, right after the object header, then the
/// state (see `LoopTimer`'s note on its 64-byte first cache line).
struct TimerStorage: ~Copyable, @unchecked Sendable {
    /// Both parts, in one cell: the timer's deinit then destroys them in
    /// one pass (two cells cost two outlined destroys, about 50
    /// instructions more per timer).
    struct Fields {
        var placements: TimerPlacements
        var state: LoopTimer.State
    }

    private let cell: _Cell<Fields>

    init(state: LoopTimer.State) {
        cell = _Cell(Fields(placements: TimerPlacements(), state: state))
    }

    /// The placements' address; only under the owner loop's lock.
    @inline(__always)
    var placements: UnsafeMutablePointer<TimerPlacements> {
        (UnsafeMutableRawPointer(cell._address) + Self.placementsOffset).assumingMemoryBound(to: TimerPlacements.self)
    }

    /// The state's address; only under the timer's lock stripe.
    @inline(__always)
    var state: UnsafeMutablePointer<LoopTimer.State> {
        (UnsafeMutableRawPointer(cell._address) + Self.stateOffset).assumingMemoryBound(to: LoopTimer.State.self)
    }

    // Constants the optimiser folds (stored properties of a fixed layout).
    private static var placementsOffset: Int { MemoryLayout<Fields>.offset(of: \.placements).unsafelyUnwrapped }
    private static var stateOffset: Int { MemoryLayout<Fields>.offset(of: \.state).unsafelyUnwrapped }
}
