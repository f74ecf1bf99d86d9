// Harbor — a process-wide amount of something, shared among uids (P12,
// "whoever asks pays").
//
// Each uid may hold up to its share; all uids together up to the total.
// With the total eight shares (PeerLimits), a uid within its own share is
// refused for the total only while the others hold more than seven shares
// between them, which takes at least eight other uids: a handful of uids,
// however much each asks for, cannot starve another.
import HarborSystem

/// What each uid holds of a process-wide amount, bounded per uid and in total.
///
/// **Thread safety:** none; a value, kept under its owner's lock.
package struct UidBudget: Sendable {
    /// Which bound a refused request would have passed.
    package enum Refusal: Equatable, Sendable {
        /// The uid's own share.
        case share
        /// The total over every uid.
        case total
    }

    /// The most one uid may hold.
    package let share: Int
    /// The most every uid together may hold.
    package let total: Int
    /// What every uid together holds.
    package private(set) var held = 0
    private var byUid: [UInt32: Int] = [:]

    package init(share: Int, total: Int) {
        self.share = share
        self.total = total
    }

    /// What `uid` holds.
    package func held(by uid: UInt32) -> Int { byUid[uid] ?? 0 }

    /// The uids holding anything.
    package var holders: Int { byUid.count }

    /// Takes `amount` for `uid`, or returns the bound it would pass, with
    /// nothing taken. The uid's own share is checked first: a uid over it
    /// is told so whatever the others hold.
    package mutating func take(_ amount: Int, for uid: UInt32) -> Refusal? {
        let own = held(by: uid)
        guard amount <= share - own else { return .share }
        guard amount <= total - held else { return .total }
        guard amount > 0 else { return nil }
        byUid[uid] = own + amount
        held += amount
        return nil
    }

    /// Gives back `amount` that `uid` took.
    package mutating func release(_ amount: Int, for uid: UInt32) {
        guard amount > 0 else { return }
        let left = held(by: uid) - amount
        byUid[uid] = left > 0 ? left : nil
        held -= amount
    }
}
