// Harbor — what another process may make this one hold (P12): the limits
// admission checks (what queued messages hold, per uid). The limits the
// transport checks (per connection, fragments, regions mapped) extend this
// type in HarborTransport (PeerLimits+Connections.swift).
//
// Every resource a peer can make a receiver hold is charged to something
// the kernel vouches for: the connection it arrived on, or the uid in the
// packet's SCM_CREDENTIALS. A peer over a limit gets a typed, counted
// refusal (`AdmissionRefusal`: `overLimit`, or `flood` for the queue); others
// are unaffected, and everything is released when the peer's connection
// closes (what it holds on a connection) or its messages are received
// (what it queued). Docs/CrossProcess.md, "Limits", lists them with the
// reasons for each number.
import HarborSystem

/// The limits on what a peer may make this process hold.
///
/// Connections are not limited here: a peer cannot open one. Only the
/// receiver makes connections (one per send right it exports, or the ones a
/// moved receive right brings, which count as that message's descriptors),
/// so how many exist is the receiving program's choice; harbord limits its
/// bootstrap connections per uid itself.
package enum PeerLimits {
    // MARK: Per uid

    /// Messages one uid may have queued on a port beyond its queue limit.
    /// A counted message read from a connection never goes past the limit
    /// (it is parked, its connection paused: ParkedMessages.swift);
    /// one in a queue moved in with a receive right may (its old holder
    /// had parked it), and so may uncounted ones past the flood headroom.
    /// Beyond this such a message is refused (`flood`).
    package static let overLimitMessagesPerUid = 256

    /// Bytes of out-of-line regions (sealed memfds and copied regions) in
    /// the messages one uid has queued on one port, not yet received.
    package static let queuedRegionBytesPerUid = 1 << 30

    /// Bytes of inline bodies one uid may have queued inside the receive
    /// rights its messages move here (their queues, nested ones included),
    /// not yet received, on one port and over every port of this process.
    /// A memory-file packet whose bodies add up to more than the uid's room
    /// is refused before any body is copied out of it. A port moved with a
    /// full queue (its limit, 1,024, plus as many again past it) of the
    /// largest bodies (64 KiB) fits: 128 MiB.
    package static let queuedInlineBytesPerUid = 2 * PortStateMachine.maximumQueueLimit * Message.maximumBodySize

    /// Bytes of inline bodies every uid together may have queued inside
    /// moved receive rights, over every port of this process: eight uids'
    /// shares (`UidBudget`), each share `queuedInlineBytesPerUid` over every
    /// port. A uid within its share is refused only while at least eight
    /// others hold more than seven shares.
    package static let queuedInlineBytesInTotal = 8 * queuedInlineBytesPerUid

    /// Descriptors in the messages one uid has queued on one port, not yet
    /// received: a quarter of this process's descriptor limit, at least 64.
    /// A share of the limit rather than a number: harbord under
    /// `LimitNOFILE=1024` and a test under 20,000 need different ones.
    package static var queuedDescriptorsPerUid: Int {
        guard let soft = openDescriptorLimit() else { return 64 }
        return max(64, min(soft, 1 << 20) / 4)  // RLIM_INFINITY comes back as Int.max
    }

}
