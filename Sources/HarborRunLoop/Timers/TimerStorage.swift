// Harbor — a timer's mutable state, inline in the timer object and guarded by locks the compiler cannot see.
import Synchronization

/// The part of a ``LoopTimer`` the timer engine changes: its placements in
/// the modes' heaps and its dates, validity and owner (`LoopTimer.State`).
///
/// Both live inline in the timer object, in `Synchronization._Cell`s (the
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
    private let placementsCell: _Cell<TimerPlacements>
    private let stateCell: _Cell<LoopTimer.State>

    init(state: LoopTimer.State) {
        placementsCell = _Cell(TimerPlacements())
        stateCell = _Cell(state)
    }

    /// The placements' address; only under the owner loop's lock.
    @inline(__always)
    var placements: UnsafeMutablePointer<TimerPlacements> { placementsCell._address }

    /// The state's address; only under the timer's lock stripe.
    @inline(__always)
    var state: UnsafeMutablePointer<LoopTimer.State> { stateCell._address }
}
