// Harbor — what a message from another process costs the port that queues
// it, and whether its uid may pay (P12): the port's own count of its queue,
// never the shared counter, and its ledger.
//
// The usual message (plain, within the limit) costs two comparisons here.
// Anything else is charged to the uid that delivered it (PeerLedger):
// counted messages past the limit, descriptors and region bytes. A uid past
// its limits is refused; others are unaffected. A counted message a pump
// reads never gets here past the limit: it is parked, its connection
// paused, since it may have been sent in good
// faith on a slot another process wrote into the counter
// (ParkedMessages.swift). Past the limit here are messages of a queue moved
// in with a receive right, and uncounted ones.
import DequeModule
import HarborSystem

extension PortCore.Guarded {
    /// Why `content`, which another process sent, may not be queued now;
    /// nil when it may (the caller then queues it at once, under the same lock).
    @inline(__always)
    mutating func admissionRefusal(for content: borrowing MessageContent) -> AdmissionRefusal? {
        let overLimit = content.countsAgainstLimit
            ? machine.countedMessages >= machine.queueLimit
            // Uncounted: send-once messages, which Mach never limits, or a
            // peer clearing the flag on a send connection to get around the
            // limit. Only a queue this long is suspect.
            : machine.queue.count >= floodLimit
        if !overLimit && content.isPlain { return nil }
        return checkedAdmission(content, overLimit: overLimit)
    }

    /// Whether a batch of messages may become the queue without a check per
    /// message: all plain, with no more counted ones than the limit.
    func admitsWithoutChecks(_ batch: borrowing Deque<MessageContent>) -> Bool {
        var counted = 0
        for content in batch {
            guard content.isPlain else { return false }
            if content.countsAgainstLimit { counted += 1 }
        }
        return machine.countedMessages + counted <= machine.queueLimit
    }

    private mutating func checkedAdmission(_ content: borrowing MessageContent, overLimit: Bool) -> AdmissionRefusal? {
        let counted = content.countsAgainstLimit
        let refusal = charge(content, overLimit: overLimit)
        if overLimit && counted {
            // Past the limit: the shared counter must not show room that is
            // not there (the sender may have written it, or sent without a
            // slot, and honest senders would follow it).
            let after = machine.countedMessages + (refusal == nil ? 1 : 0)
            slotCounter?.clamp(atMost: Int32(clamping: machine.queueLimit - after))
        }
        return refusal
    }

    private mutating func charge(_ content: borrowing MessageContent, overLimit: Bool) -> AdmissionRefusal? {
        if overLimit && (content.countsAgainstLimit
                         ? machine.countedMessages >= floodLimit : machine.queue.count >= 2 * floodLimit) {
            return .flood
        }
        guard transport != nil else { return nil }
        var usage = PeerUsage(overLimit: overLimit ? 1 : 0)
        if !content.isPlain { usage = usage + Self.weight(of: content) }
        let uid = UInt32(content.trailer.sender.uid)
        let handedOut = machine.sequenceNumber, ahead = machine.queue.count
        return ledger.charge(usage, to: uid, handedOut: handedOut, queued: ahead)
    }

    /// The descriptors (carried files' included), region bytes and moved
    /// queues' body bytes `content` holds while queued.
    static func weight(of content: borrowing MessageContent) -> PeerUsage {
        var usage = PeerUsage()
        for right in content.rights { usage = usage + weight(of: right) }
        if let reply = content.reply { usage = usage + weight(of: reply) }
        for region in content.regions {
            usage.regionBytes += region.count
            if region.descriptor != nil { usage.descriptors += 1 }
        }
        usage.descriptors += content.carriedFileCount  // one each (Message+Files.swift)
        return usage
    }

    /// A send right holds its socket and slot counter (counted even when the
    /// import found the port known and closed them: the count is an upper
    /// bound), a send-once right its socket, a moved receive right its slot
    /// counter, its connections and whatever its own queue holds, and its
    /// messages' bodies (those in the receive rights they move in turn are
    /// charged on this moved port's own ledger, once each).
    private static func weight(of right: CarriedRight) -> PeerUsage {
        switch right {
        case .taken: return PeerUsage()
        case .send: return PeerUsage(descriptors: 2)
        case .sendOnce: return PeerUsage(descriptors: 1)
        case .receive(let token):
            // Another port's lock under this one's: a port moved in is a port
            // of its own (P11), and no port takes another's lock under its own.
            let (transport, bodies, queue) = token.port.state.withGuarded { guarded in
                (guarded.transport, guarded.machine.queue.reduce(0) { $0 + $1.body.count }, guarded.ledger.total)
            }
            guard let moved = transport else { return PeerUsage(descriptors: 1, inlineBytes: bodies) }
            return PeerUsage(descriptors: 1 + moved.connectionCount + queue.descriptors, regionBytes: queue.regionBytes,
                             inlineBytes: bodies)
        }
    }
}
