// Harbor — how many sessions each uid holds on one listener (whoever asks pays).
import HarborSystem

/// The sessions each uid holds on one listener. Each accepted session costs
/// the listener a port and a thread until the client lets it go, so a uid
/// may hold ``perUid`` of them, and all uids together ``total``: a uid past
/// its share is refused (`sessionRejected`, its reason says why), others
/// are still served. `UidShares` (HarborSystem) counts them.
enum SessionShares {
    /// The most sessions one uid holds on one listener.
    static let perUid = 64
    /// The most sessions one listener holds.
    static let total = 1024

    /// A listener's count: empty.
    static func make() -> UidShares { UidShares(perUid: perUid, total: total) }
}
