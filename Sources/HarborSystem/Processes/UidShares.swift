// Harbor — how much of something each uid holds (whoever asks pays).

/// Counts what each uid holds of something a process spends on its peers
/// (an XPC listener's sessions, an actor system's running calls): one uid
/// may hold ``perUid`` of it, and all uids together ``total``. A uid past
/// its share is refused; others are still served.
///
/// **Thread safety:** any thread.
package final class UidShares: Sendable {
    /// The most one uid holds.
    package let perUid: Int
    /// The most all uids hold together.
    package let total: Int

    private let counts = HarborLock<(byUid: [UInt32: Int], total: Int)>(([:], 0))

    /// Shares of `perUid` for each uid, `total` for all.
    package init(perUid: Int, total: Int) {
        self.perUid = perUid
        self.total = total
    }

    /// Takes one for `uid`; false when that passes its share or the total.
    package func take(for uid: UInt32) -> Bool {
        counts.withLock { counts in
            let held = counts.byUid[uid, default: 0]
            guard held < perUid, counts.total < total else { return false }
            counts.byUid[uid] = held + 1
            counts.total += 1
            return true
        }
    }

    /// Gives back one that `uid` took.
    package func give(for uid: UInt32) {
        counts.withLock { counts in
            guard let held = counts.byUid[uid] else { return }
            counts.byUid[uid] = held > 1 ? held - 1 : nil
            counts.total -= 1
        }
    }

    /// What `uid` holds now.
    package func held(by uid: UInt32) -> Int {
        counts.withLock { $0.byUid[uid, default: 0] }
    }
}
