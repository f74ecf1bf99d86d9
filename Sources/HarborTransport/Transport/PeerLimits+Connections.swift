// Harbor — what another process may make this one hold (P12): the limits the
// transport checks, per connection and per message, beside the ones
// admission checks (HarborPorts' PeerLimits.swift).
import HarborSystem
import HarborPorts

extension PeerLimits {
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

    // MARK: Fragments, per uid

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
