// Harbor — what another process may make this one hold (P12), in one place.
//
// Every resource a peer can make a receiver hold is charged to something
// the kernel vouches for: the connection it arrived on, or the uid in the
// packet's SCM_CREDENTIALS. A peer over a limit gets a typed, counted
// refusal (`WireRejection` `overLimit`, or `flood` for the queue); others
// are unaffected, and everything is released when the peer's connection
// closes (what it holds on a connection) or its messages are received
// (what it queued). Docs/CrossProcess.md, "Limits", lists them with the
// reasons for each number.
import HarborSystem
import HarborPorts

/// The limits on what a peer may make this process hold.
///
/// Connections are not limited here: a peer cannot open one. Only the
/// receiver makes connections (one per send right it exports, or the ones a
/// moved receive right brings, which count as that message's descriptors),
/// so how many exist is the receiving program's choice; harbord limits its
/// bootstrap connections per uid itself.
package enum PeerLimits {
    // MARK: Per connection

    /// Waiter eventfds held for one connection. A wait packet replaces the
    /// connection's previous one (closing it), so a peer re-sending wait
    /// packets holds one descriptor here, and none once its connection closes.
    package static let waitersPerConnection = 1

    /// Bytes that fragmented messages in progress on one connection may
    /// declare (their copied regions), together. One message of the largest
    /// payload the benchmarks send (256 MiB) fits; a larger one is refused
    /// when its first packet arrives, before its regions are reserved.
    package static let partialBytesPerConnection = 256 << 20

    /// Fragmented messages in progress on one connection at once (one per
    /// sending process; WireFormat.md, "Fragmented messages").
    package static let assembliesPerConnection = WireFormat.maximumAssemblies

    /// The send buffer asked for on each connection's sending end. The
    /// kernel doubles it for its bookkeeping (capped at twice
    /// `net.core.wmem_max`) and charges every packet written and not yet
    /// read against it, at the packet's true size (768 bytes for a small
    /// one): so it is what the connection's senders may have in flight,
    /// and the kernel memory a receiver that stops reading lets them pin,
    /// until it reads the packets or closes the connection (the writers
    /// exiting frees nothing while it keeps its end open). Worst case, 2 MiB
    /// times the connections a receiver keeps (500: 1 GiB; at 4 MiB asked,
    /// 500 connections written full pinned 2.1 GB). 1 MiB still holds a
    /// full queue (1,024) of small messages (2,731 of 64 bytes, 911 of
    /// 1 KiB) or 31 of the largest bodies (64 KiB), and cost no measured
    /// throughput (Docs/CrossProcess.md, "Limits").
    package static let connectionBufferBytes: CInt = 1 << 20

    // MARK: Per uid

    /// Bytes that fragmented messages in progress from one uid may declare,
    /// together, over every connection of this process: a uid that sends
    /// three unfinished 256 MiB messages on three connections holds one.
    package static let partialBytesPerUid = 256 << 20

    /// Bytes that fragmented messages in progress from every uid may
    /// declare, together: eight uids' shares (`UidBudget`). A uid within
    /// its own share is refused for the total only while the others hold
    /// more than seven shares (1.75 GiB), which takes at least eight other
    /// uids; without it, twelve uids held 2.3 GB in harbord.
    package static let partialBytesInTotal = 8 * partialBytesPerUid

    /// Messages one uid may have queued on a port beyond its queue limit.
    /// A counted message read from a connection never goes past the limit
    /// (it is parked, its connection paused: PortTransport+Parking.swift);
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

    // MARK: Per message

    /// Bytes of one sealed out-of-line region a receiver maps (a copied
    /// region is limited by `partialBytesPerConnection`). A larger memfd is
    /// refused, closed without being mapped.
    package static let regionBytes = 1 << 30

    /// Out-of-line regions in one message (checked by the parser).
    package static let regionsPerMessage = Message.maximumRegions

    /// Rights carried by one message (checked by the parser).
    package static let rightsPerMessage = Message.maximumCarriedRights
}
