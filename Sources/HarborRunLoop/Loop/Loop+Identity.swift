// Harbor — comparing loops: a loop is equal only to itself.

extension Loop: Hashable {
    /// Whether `lhs` and `rhs` are the same loop (identity: one loop per
    /// thread, so the same thread's loop). `Loop.current == Loop.main` says
    /// whether the calling thread is the main one.
    /// **CF equivalent:** `CFEqual` on two `CFRunLoopRef`s, `rl == CFRunLoopGetMain()`.
    public static func == (lhs: Loop, rhs: Loop) -> Bool { lhs === rhs }

    /// Hashes the loop's identity, so loops can key a dictionary or fill a set.
    /// **CF equivalent:** `CFHash` on a `CFRunLoopRef`.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
