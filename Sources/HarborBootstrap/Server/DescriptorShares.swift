// Harbor — how the name server's descriptors are shared between uids: a fixed share each, and a reserve for root.

/// The share rule for the descriptors the name server may hold for uids
/// (Docs/harbord.md, "Limits"). Pure arithmetic, so it can be checked alone.
///
/// What is available to uids (the process's limit, less the server's own
/// reserve and what it holds for itself) is cut into ``shareCount`` equal
/// shares:
/// - every uid other than root and the server's own uid (the
///   *unprivileged* ones) may hold at most one share, and all of them
///   together at most ``poolShares`` shares;
/// - root and the server's uid may hold whatever is free: the other two
///   shares (and what rounding leaves) are a reserve only they may use.
///
/// So root (with the server's uid) always finds at least two shares the
/// unprivileged uids cannot take, whatever they do. Any other uid is
/// refused only over its own share, or when the other unprivileged uids
/// together hold more than 15 shares, which takes at least 15 of them each
/// holding its full share; or when root has taken what is free, since root
/// is trusted with the whole table.
package struct DescriptorShares: Sendable, Hashable {
    /// Shares the available descriptors are cut into.
    package static let shareCount = 18
    /// Shares the unprivileged uids may hold together.
    package static let poolShares = 16

    /// Descriptors available to all uids together.
    package let available: Int

    /// The rule for `available` descriptors.
    package init(available: Int) { self.available = max(0, available) }

    /// The most one uid may hold.
    package var share: Int { available / Self.shareCount }

    /// The most the unprivileged uids may hold together.
    package var pool: Int { Self.poolShares * share }

    /// Whether a uid holding `held` may take `more`.
    /// - Parameters:
    ///   - privileged: whether it is root or the server's own uid (which may use the reserve).
    ///   - unprivilegedTotal: what all unprivileged uids hold (this one included, if it is one).
    ///   - total: what all uids hold.
    package func allows(held: Int, more: Int, privileged: Bool, unprivilegedTotal: Int, total: Int) -> Bool {
        if privileged { return total + more <= available }
        return held + more <= share && unprivilegedTotal + more <= pool && total + more <= available
    }
}
