// Harbor — how many sessions each uid holds on one listener (whoever asks pays).
import HarborSystem

/// The sessions each uid holds on one listener. Each accepted session costs
/// the listener a port and a thread until the client lets it go, so a uid
/// may hold ``perUid`` of them, and all uids together ``total``: a uid past
/// its share is refused (`sessionRejected`, its reason says why), others
/// are still served.
final class SessionShares: Sendable {
    /// The most sessions one uid holds on one listener.
    static let perUid = 64
    /// The most sessions one listener holds.
    static let total = 1024

    private let counts = HarborLock<(byUid: [UInt32: Int], total: Int)>(([:], 0))

    /// Takes a session for `uid`; false when that passes its share or the total.
    func take(for uid: UInt32) -> Bool {
        counts.withLock { counts in
            let held = counts.byUid[uid, default: 0]
            guard held < Self.perUid, counts.total < Self.total else { return false }
            counts.byUid[uid] = held + 1
            counts.total += 1
            return true
        }
    }

    /// A session of `uid` ended (or was never made).
    func give(for uid: UInt32) {
        counts.withLock { counts in
            guard let held = counts.byUid[uid] else { return }
            counts.byUid[uid] = held > 1 ? held - 1 : nil
            counts.total -= 1
        }
    }
}
