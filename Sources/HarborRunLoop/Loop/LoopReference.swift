// Harbor — a weak reference to a loop, boxed, for `Membership`.

/// A weak reference to a loop in a box of its own, so that a `Membership`
/// holding it stays a plain, bitwise-movable value: a struct with a weak
/// field is reached through its address and copied with the reference's
/// side table, a cache miss on every check of a ready source's mode.
final class LoopReference: Sendable {
    /// The loop, until it is released.
    weak let loop: Loop?

    init(_ loop: Loop) { self.loop = loop }
}
