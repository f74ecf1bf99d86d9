// Harbor — what the messages each uid queued on a port hold, until received.
//
// A peer's messages wait in the port's queue until the receiving program
// takes them; meanwhile they hold descriptors and mapped memory here. The
// ledger charges each queued message that holds anything (or that arrived
// past the queue limit) to the uid that delivered it, and refuses a message
// that would take the uid past its limits (PeerLimits).
//
// No hook on the receive path: a port's queue is first in, first out, and
// its sequence number counts messages handed out, so a message queued
// behind n others is gone once the sequence number has grown by n + 1. An
// entry records that point; entries are settled (released) whenever the
// ledger is consulted, which is when the next message that needs it arrives.
// So plain messages within the limit, the usual traffic, never touch it.
import DequeModule
import HarborSystem

/// The charges of one port's queued messages, by uid.
///
/// **Thread safety:** none; it is part of the port's state, under the port's lock.
package struct PeerLedger {
    private struct Entry {
        /// The port's sequence number once this message has been handed out.
        let settledAt: UInt64
        let uid: UInt32
        let usage: PeerUsage
    }

    /// The inline bodies queued in moved receive rights, by uid, over
    /// every port of this process (`PeerLimits.queuedInlineBytesInTotal`);
    /// a leaf lock, taken under a ledger's.
    private static let movedInline = HarborLock(
        UidBudget(share: PeerLimits.queuedInlineBytesPerUid, total: PeerLimits.queuedInlineBytesInTotal))

    /// The bytes of moved queues' bodies `uid` may still have queued here,
    /// over every port: its share's rest, or what is left of the total.
    package static func movedInlineRoom(for uid: UInt32) -> Int {
        movedInline.withLockedValue { min($0.share - $0.held(by: uid), $0.total - $0.held) }
    }

    /// The bytes of moved queues' bodies every uid's messages hold here.
    package static var movedInlineHeld: Int { movedInline.withLockedValue { $0.held } }

    private var entries = Deque<Entry>()
    private var byUid: [UInt32: PeerUsage] = [:]
    /// Counted messages read while the queue was at its limit, waiting off
    /// the queue for room, their connections unread meanwhile
    /// (ParkedMessages.swift).
    package var parked = ParkedMessages()

    package init() {}

    /// Forgets everything (the port died or moved away) and returns the
    /// parked messages, to be dropped by the caller once this lock is
    /// released: dropping a message releases the rights it carries, which
    /// takes their ports' locks.
    package mutating func reset() -> [MessageContent] {
        // A ledger never used (every proxy's, most ports'): nothing to
        // release, and no new ledger made over it.
        if entries.isEmpty && byUid.isEmpty && parked.isUnused { return [] }
        defer { self = PeerLedger() }
        let moved = entries.filter { $0.usage.inlineBytes > 0 }
        if !moved.isEmpty {
            Self.movedInline.withLockedValue { budget in
                for entry in moved { budget.release(entry.usage.inlineBytes, for: entry.uid) }
            }
        }
        return parked.removeAll()
    }

    /// What `uid`'s messages still queued hold (after `settle`).
    package func usage(of uid: UInt32) -> PeerUsage { byUid[uid] ?? PeerUsage() }

    /// What every uid's queued messages hold together (a moved receive
    /// right carries its queue: its weight is the whole of it).
    package var total: PeerUsage { byUid.values.reduce(PeerUsage(), +) }

    /// Releases the charges of messages the port has handed out: those
    /// whose point is at or before `handedOut`, its sequence number.
    package mutating func settle(handedOut: UInt64) {
        while let first = entries.first, first.settledAt <= handedOut {
            entries.removeFirst()
            if first.usage.inlineBytes > 0 {
                Self.movedInline.withLockedValue { $0.release(first.usage.inlineBytes, for: first.uid) }
            }
            let left = (byUid[first.uid] ?? PeerUsage()) - first.usage
            byUid[first.uid] = left.isZero ? nil : left
        }
    }

    /// Charges a message from `uid` that is about to be queued behind
    /// `queued` others on a port that has handed out `handedOut` messages,
    /// unless that takes the uid past a limit: then nothing is charged and
    /// the reason is returned.
    package mutating func charge(
        _ usage: PeerUsage, to uid: UInt32, handedOut: UInt64, queued: Int
    ) -> AdmissionRefusal? {
        settle(handedOut: handedOut)
        let after = self.usage(of: uid) + usage
        if usage.overLimit > 0, after.overLimit > PeerLimits.overLimitMessagesPerUid { return .flood }
        if usage.descriptors > 0, after.descriptors > PeerLimits.queuedDescriptorsPerUid { return .overLimit }
        if usage.regionBytes > 0, after.regionBytes > PeerLimits.queuedRegionBytesPerUid { return .overLimit }
        if usage.inlineBytes > 0, after.inlineBytes > PeerLimits.queuedInlineBytesPerUid { return .overLimit }
        if usage.isZero { return nil }
        if usage.inlineBytes > 0, Self.movedInline.withLockedValue({ $0.take(usage.inlineBytes, for: uid) }) != nil {
            return .overLimit
        }
        byUid[uid] = after
        entries.append(Entry(settledAt: handedOut &+ UInt64(queued) &+ 1, uid: uid, usage: usage))
        return nil
    }
}
