// Harbor — a fragmented message being put back together from its fragments.
//
// The first packet of a fragmented message is decoded like any other (its
// rights imported, its copied regions allocated); the regions' bytes follow
// in fragment packets from the same process on the same connection, in
// order (Docs/WireFormat.md). Fragments are hostile input like the rest:
// one can only fill the regions the first packet declared, never more, and
// what the regions declare is charged to the connection and the uid while
// the message is unfinished (PeerLimits, `PartialCharge`).
import HarborSystem
import HarborPorts

/// A message whose copied regions are still arriving.
///
/// **Thread safety:** confined to the pump that holds it (under its lock).
package struct FragmentAssembly {
    package private(set) var content: MessageContent
    /// The process sending the fragments (SCM_CREDENTIALS of the first packet).
    package let sender: ProcessIdentity
    /// Indices in `content.regions` of the copied regions, in order.
    private var targets: [Int]
    private var target = 0
    private var offset = 0
    /// What the unfinished message holds, charged to its sender's uid;
    /// released (and its regions unmapped) when the last copy of this
    /// assembly goes, however it goes, unless `finish()` took the message.
    private var charge: PartialCharge?

    package init(content: MessageContent, sender: ProcessIdentity) {
        self.content = content
        self.sender = sender
        targets = content.regions.indices.filter { content.regions[$0].descriptor == nil }
    }

    /// Bytes the copied regions declare: what the message will hold.
    package var declaredBytes: Int { targets.reduce(0) { $0 + content.regions[$1].count } }

    /// Charges the declared bytes to the sender's uid (process-wide), or
    /// throws `overLimit` with nothing charged.
    package mutating func takeCharge() throws(WireRejection) {
        charge = try PartialCharge(uid: UInt32(sender.uid), bytes: declaredBytes,
                                   regions: targets.map { content.regions[$0] })
    }

    /// The whole message, its charge released and its regions the
    /// receiver's to keep (recycled when freed, as any private region).
    package mutating func finish() -> MessageContent {
        charge?.complete()
        charge = nil
        return content
    }

    package var isComplete: Bool { target == targets.count }

    /// Where the next fragment's bytes go: the unfilled rest of the current region.
    package var nextDestination: UnsafeMutableRawBufferPointer? {
        guard !isComplete else { return nil }
        let region = content.regions[targets[target]].privateBytes
        return UnsafeMutableRawBufferPointer(rebasing: region[offset...])
    }

    /// Copies one fragment's bytes into the regions. A fragment never
    /// straddles two regions' ends beyond what is declared: more bytes than
    /// remain are refused.
    package mutating func append(_ bytes: UnsafeRawBufferPointer) throws(WireRejection) {
        var rest = bytes
        while !rest.isEmpty {
            guard let destination = nextDestination else {
                throw WireRejection(.badFragment, "\(rest.count) bytes beyond the declared regions")
            }
            let count = min(destination.count, rest.count)
            destination.baseAddress!.copyMemory(from: rest.baseAddress!, byteCount: count)
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            advance(by: count)
        }
    }

    /// Records `count` bytes written straight into ``nextDestination``.
    package mutating func advance(by count: Int) {
        offset += count
        while !isComplete, offset == content.regions[targets[target]].count {
            target += 1
            offset = 0
        }
    }
}

/// Bytes of unfinished fragmented messages charged to one uid, over every
/// connection of this process, within its share of a process-wide total
/// (`PeerLimits.partialBytesPerUid`, `PeerLimits.partialBytesInTotal`).
///
/// An owning type: the charge is released when the object goes, so no path
/// that drops an unfinished message (refused fragment, replaced message,
/// closed connection, destroyed or moved port) can forget it. The regions
/// of a message that never finished are unmapped rather than pooled: their
/// pages were filled by a peer that may be gone, and kept in the pool they
/// would stay resident.
///
/// **Thread safety:** the budget is under a mutex; an object is confined
/// to the pump that holds its assembly.
package final class PartialCharge {
    private static let budget = HarborLock(
        UidBudget(share: PeerLimits.partialBytesPerUid, total: PeerLimits.partialBytesInTotal))

    let uid: UInt32
    let bytes: Int
    private var regions: [MappedRegion]

    init(uid: UInt32, bytes: Int, regions: [MappedRegion]) throws(WireRejection) {
        switch Self.budget.withLockedValue({ $0.take(bytes, for: uid) }) {
        case nil:
            break
        case .share:
            throw WireRejection(.overLimit, "uid \(uid) has more than \(PeerLimits.partialBytesPerUid >> 20) MiB "
                                + "of fragmented messages in progress")
        case .total:
            throw WireRejection(.overLimit, "this process holds \(PeerLimits.partialBytesInTotal >> 20) MiB "
                                + "of fragmented messages in progress")
        }
        self.uid = uid
        self.bytes = bytes
        self.regions = regions
    }

    /// The bytes `uid`'s unfinished fragmented messages declare now.
    package static func held(by uid: UInt32) -> Int { budget.withLockedValue { $0.held(by: uid) } }

    /// The bytes every uid's unfinished fragmented messages declare now.
    package static var heldInTotal: Int { budget.withLockedValue { $0.held } }

    /// The message is whole: its regions are no longer this charge's.
    func complete() { regions = [] }

    deinit {
        for region in regions { region.discardWhenFreed() }
        Self.budget.withLockedValue { $0.release(bytes, for: uid) }
    }
}
