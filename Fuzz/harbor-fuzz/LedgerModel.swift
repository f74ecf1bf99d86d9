// Harbor fuzzing — what a port's ledger should hold: the `ledger` target's model.
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

/// A port's queue as the ledger target plays it: the messages still
/// queued (their uid and what each holds), how many were handed out, and
/// the parked messages' model.
struct LedgerModel {
    /// Queued messages (the index of their uid in `LedgerTarget.uids`),
    /// oldest first, from `head` on.
    private var messages: [(uid: Int, usage: PeerUsage)] = []
    private var head = 0
    /// What each uid's queued messages hold, kept as they come and go, by
    /// the uid's index in `LedgerTarget.uids`: an array, not a dictionary,
    /// for the thousands of inputs a second.
    private var byUid = [PeerUsage](repeating: PeerUsage(), count: LedgerTarget.uids.count)
    /// The port's sequence number: messages handed out.
    private(set) var handedOut: UInt64
    /// Whether the ledger has settled since the last message was handed out
    /// (then it holds exactly what the queue does).
    var settled = true
    var parked = ParkedModel()

    init(handedOut: UInt64) {
        self.handedOut = handedOut
        messages.reserveCapacity(LedgerTarget.messagesPerInput)
    }

    /// Messages queued.
    var count: Int { messages.count - head }

    /// A message from `LedgerTarget.uids[uid]` joins the queue.
    mutating func append(_ usage: PeerUsage, from uid: Int) {
        messages.append((uid, usage))
        byUid[uid] = byUid[uid] + usage
    }

    /// Hands out the first `count` queued messages (fewer if fewer are queued).
    mutating func receive(_ wanted: Int) {
        let taken = min(wanted, count)
        guard taken > 0 else { return }
        for (uid, usage) in messages[head..<(head + taken)] { byUid[uid] = byUid[uid] - usage }
        head += taken
        if head > 1024 && head * 2 > messages.count {
            messages.removeFirst(head)
            head = 0
        }
        handedOut += UInt64(taken)
        settled = false
    }

    /// The port died or moved: its queue is gone.
    mutating func removeAll() {
        messages.removeAll(keepingCapacity: true)
        head = 0
        for uid in byUid.indices { byUid[uid] = PeerUsage() }
    }

    /// What `LedgerTarget.uids[uid]`'s queued messages hold.
    func held(by uid: Int) -> PeerUsage { byUid[uid] }

    /// What charging `usage` to `LedgerTarget.uids[uid]` must give, by the limits alone.
    func verdict(_ usage: PeerUsage, for uid: Int) -> AdmissionRefusal? {
        let after = byUid[uid] + usage
        if usage.overLimit > 0, after.overLimit > PeerLimits.overLimitMessagesPerUid { return .flood }
        if usage.descriptors > 0, after.descriptors > LedgerTarget.descriptorLimit { return .overLimit }
        if usage.regionBytes > 0, after.regionBytes > LedgerTarget.regionLimit { return .overLimit }
        return nil
    }

    /// Stops the run unless `ledger` agrees with the model.
    func check(_ ledger: PeerLedger) {
        var sum = PeerUsage()
        for (index, uid) in LedgerTarget.uids.enumerated() {
            let charged = ledger.usage(of: uid), queued = byUid[index]
            sum = sum + charged
            guard charged.overLimit >= 0, charged.descriptors >= 0, charged.regionBytes >= 0,
                  charged.overLimit <= PeerLimits.overLimitMessagesPerUid,
                  charged.descriptors <= LedgerTarget.descriptorLimit,
                  charged.regionBytes <= LedgerTarget.regionLimit else {
                fail("ledger: uid \(uid) holds \(charged), past a limit or below zero")
            }
            guard charged.overLimit >= queued.overLimit, charged.descriptors >= queued.descriptors,
                  charged.regionBytes >= queued.regionBytes, !settled || charged == queued else {
                fail("ledger: uid \(uid) charged \(charged), its queued messages hold \(queued) (settled: \(settled))")
            }
        }
        guard ledger.total == sum else { fail("ledger: total \(ledger.total), the uids hold \(sum)") }
        guard ledger.parked.count == parked.count else {
            fail("ledger: \(ledger.parked.count) parked, the model has \(parked.count)")
        }
        for token in 0..<4 where ledger.parked.isPaused(UInt64(token)) != parked.isPaused(UInt64(token)) {
            fail("ledger: connection \(token) paused: \(ledger.parked.isPaused(UInt64(token)))")
        }
    }
}
