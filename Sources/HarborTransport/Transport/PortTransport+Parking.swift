// Harbor — a port's transport, receiving at a full queue: a connection whose
// message arrives while the queue is at its limit is read no further until a
// slot frees (P12).
//
// The shared slot counter is a hint any sender can write
// (Memory/SharedSlots.swift): a process writing *room* into it in a loop
// makes honest senders take slots that are not there and send past the
// queue limit. Their messages were sent in good faith and must not be
// refused for it, and the queue must not grow past its limit either. So a
// counted message that arrives while the receiver's own count says the queue
// is full is *parked*: held beside the queue, in arrival order, and its
// connection leaves the port's readiness set, so nothing more is read from
// it. What its sender sends meanwhile waits in the kernel, in that
// connection's socket buffer, which only the processes holding that send
// right fill: when it is full their sends wait for room and time out by
// their own deadlines (RemoteRoute's `waitForRoom`). When a slot frees,
// parked messages join the queue first, oldest first, and a connection
// whose parked messages have all joined is read again.
//
// - The limit holds exactly for the queue; a connection has at most what
//   one pump read from it parked (the message that found the queue full,
//   and the read-ahead behind it: 33 messages).
// - Readiness stays exact: a paused connection is out of the epoll set
//   (`EPOLL_CTL_DEL`), so its waiting packets wake nobody; it is added back
//   when its last parked message joins the queue. Both happen under the
//   port's lock, so a pause and a resume never cross.
// - No wedge: a parked message exists only while counted messages are
//   queued (it parked because the queue was full), and each one handed out
//   frees a slot, which resumes (`slotFreed`, told by the receiver's own
//   `parked` count in the counter's private words). A port that moves takes
//   its parked messages along behind its queue (`takeParked`), its
//   connections with it; a port that dies drops them with its queue.
// - Honest traffic never parks: senders that take their slots never find
//   the queue full, so the usual path costs one load of a private word.
import DequeModule
import HarborSystem
import HarborPorts

/// Messages parked off a full queue, by connection, and the connections
/// paused for them (each paused connection has at least one), taking turns.
///
/// A freed slot goes to the connection whose turn it is, which then goes to
/// the back: each connection with parked messages gets one slot per round,
/// however many it has parked, so a sender flooding without slots delays
/// another by one message per round at most (P12).
///
/// **Thread safety:** none; it lives in the transport's `ledger`, whose lock
/// is taken under the port's own.
struct ParkedMessages {
    /// Per connection, in arrival order; a nil is the connection's end,
    /// read behind its parked messages: its closing counts after they join.
    private var byConnection: [UInt64: Deque<MessageContent?>] = [:]
    /// Connections with something parked, in turn.
    private var turns = Deque<UInt64>()
    /// Parked entries (messages and ends), every connection together.
    private(set) var count = 0

    /// Whether connection `token` is paused: its next message must park too.
    func isPaused(_ token: UInt64) -> Bool { byConnection[token] != nil }

    /// Parks `content` from connection `token`; true when that connection
    /// was not paused before (the caller then pauses it).
    mutating func park(_ content: consuming MessageContent, from token: UInt64) -> Bool {
        count += 1
        if byConnection[token] != nil {
            byConnection[token]?.append(content)
            return false
        }
        byConnection[token] = [content]
        turns.append(token)
        return true
    }

    /// Parks connection `token`'s end behind its parked messages; false
    /// (nothing done) when it has none, and its closing counts at once.
    mutating func parkEnd(of token: UInt64) -> Bool {
        guard byConnection[token] != nil else { return false }
        byConnection[token]?.append(nil)
        count += 1
        return true
    }

    /// Takes parked messages for `room` free slots, one counted message per
    /// connection per turn (uncounted ones and ends need no slot and come
    /// with it); returns them, the connection ends among them (whose
    /// closings the caller then counts), and the connections left with
    /// nothing parked (the caller reads them again).
    mutating func release(room: Int) -> (messages: [MessageContent], ends: Int, resumed: [UInt64]) {
        var room = room
        var messages: [MessageContent] = []
        var ends = 0
        var resumed: [UInt64] = []
        while room > 0, let token = turns.popFirst() {
            var tookCounted = false
            while let first = byConnection[token]?.first {
                if first?.countsAgainstLimit == true {
                    if tookCounted || room == 0 { break }
                    room -= 1
                    tookCounted = true
                }
                byConnection[token]?.removeFirst()
                count -= 1
                if let content = first { messages.append(content) } else { ends += 1 }
            }
            if byConnection[token]?.isEmpty ?? true {
                byConnection[token] = nil
                resumed.append(token)
            } else {
                turns.append(token)
            }
        }
        return (messages, ends, resumed)
    }

    /// Takes every parked message (the port moves or dies), each
    /// connection's in its order.
    mutating func removeAll() -> [MessageContent] {
        var messages: [MessageContent] = []
        for token in turns { messages += (byConnection[token] ?? []).compactMap { $0 } }
        byConnection.removeAll()
        turns.removeAll()
        count = 0
        return messages
    }
}

extension PortTransport {

    /// Whether connection `token` is paused (its messages park). One load of
    /// a private word while nothing is parked.
    func isPaused(_ token: UInt64) -> Bool {
        counter.parked > 0 && ledger.withLockedValue { $0.parked.isPaused(token) }
    }

    /// Stops reading connection `token` (the port's lock held): out of the
    /// readiness set, so the packets waiting in it wake nobody.
    fileprivate func pauseReading(_ token: UInt64) {
        table.withLockedValue { table in
            guard let connection = table.connections[token] else { return }
            EpollControl.remove(epollFD, connection.socket.rawValue)
        }
    }

    /// Reads connection `token` again (the port's lock held).
    fileprivate func resumeReading(_ token: UInt64) {
        table.withLockedValue { table in
            guard !table.isShutDown, let connection = table.connections[token] else { return }
            // Level-triggered: packets that waited meanwhile wake the set at once.
            try? EpollControl.add(epollFD, connection.socket.rawValue, events: .readable, token: token)
        }
    }

    /// Queues parked messages while the queue has room, oldest first, and
    /// reads their connections again once nothing of theirs is parked.
    /// Called when a slot frees (`slotFreed`).
    func resumeParked(into port: PortCore) {
        guard counter.parked > 0 else { return }
        var refusals: [WireRejectionReason] = []
        var gaveBack = false
        var ends = 0
        port.state.withGuarded { guarded in
            guard guarded.transport === self, !guarded.machine.isDead else { return }
            let room = guarded.machine.queueLimit - guarded.machine.countedMessages
            guard room > 0 else { return }
            let (messages, released, resumed) = ledger.withLockedValue { ledger in
                defer { slots.setParked(ledger.parked.count) }
                return ledger.parked.release(room: room)
            }
            for content in messages {
                // Within the limit now: refused only past the uid's other
                // limits (descriptors, region bytes), its own business.
                if let refusal = guarded.queueRemote(content, returningSlotTo: counter, gaveBack: &gaveBack) {
                    refusals.append(refusal)
                }
            }
            for token in resumed { resumeReading(token) }
            ends = released
        }
        for refusal in refusals { WireRejections.record(refusal) }
        // Only send connections pause (a send-once one carries one message,
        // which never counts).
        for _ in 0..<ends { port.connectionClosed(.send, used: false) }
    }

    /// Connection `token` ended (the pump read its end and closed it): if
    /// messages of it are parked, its closing is counted once they have
    /// joined the queue (true); else the caller counts it now (false).
    func parkEnd(of token: UInt64) -> Bool {
        guard counter.parked > 0 else { return false }
        return ledger.withLockedValue { ledger in
            defer { slots.setParked(ledger.parked.count) }
            return ledger.parked.parkEnd(of: token)
        }
    }

    /// Takes the parked messages out, for a receive right leaving the
    /// process with its queue (the port's lock held): they go behind it.
    package func takeParked() -> [MessageContent] {
        guard counter.parked > 0 else { return [] }
        return ledger.withLockedValue { ledger in
            defer { slots.setParked(0) }
            return ledger.parked.removeAll()
        }
    }
}

extension PortCore {
    /// The connection (by epoll token) each message a pump read came from:
    /// the first message's, then runs of the batch's. One run, and no
    /// allocation, unless several connections delivered in one pump.
    struct PumpedFrom {
        var first: UInt64 = 0
        /// Runs of the batch before the last, only when there are several
        /// (nil otherwise: no array, no reference count on the usual path).
        var earlierRuns: [(token: UInt64, count: Int)]?
        var lastToken: UInt64 = 0
        var lastCount = 0

        mutating func appendToBatch(_ token: UInt64) {
            if lastCount > 0 && token != lastToken {
                earlierRuns = (earlierRuns ?? []) + [(lastToken, lastCount)]
                lastCount = 0
            }
            lastToken = token
            lastCount += 1
        }

        /// The tokens of the batch, in order.
        func batchTokens() -> [UInt64] {
            var tokens: [UInt64] = []
            for run in earlierRuns ?? [] { tokens += repeatElement(run.token, count: run.count) }
            return tokens + repeatElement(lastToken, count: lastCount)
        }
    }

    /// The first message a pump read, from connection `token` of
    /// `transport`: with `take`, handed straight to the pumping receiver
    /// when the queue is empty (queued and dequeued in one critical section,
    /// so the readiness eventfd is left alone); otherwise queued, or parked
    /// if the queue is full (see the top of this file). Refused, or the port
    /// moved or dead meanwhile, it gives its slot back (`gaveBack`). The
    /// message is moved throughout, never copied. `freed` is the transport
    /// to tell of the slot the taken message freed, once the caller has
    /// queued the rest of what its pump read.
    func acceptPumped(
        _ content: consuming MessageContent, from token: UInt64, of transport: PortTransport, take: Bool,
        gaveBack: inout Bool, freed: inout (any PortConnections)?
    ) -> MessageContent? {
        let counted = content.countsAgainstLimit
        let nothingParked = transport.counter.parked == 0
        var pending: MessageContent? = consume content
        var taken: MessageContent?
        var wake: Parker?
        let refusal = state.withGuarded { guarded -> WireRejectionReason? in
            guard take, nothingParked, guarded.machine.queue.isEmpty, guarded.transport === transport,
                  !guarded.machine.isDead, !(counted && guarded.isFlooded), let direct = pending.take() else {
                guard let queued = pending.take() else { return nil }
                return guarded.admitPumped(queued, from: token, of: transport, gaveBack: &gaveBack)
            }
            guard let dequeued = guarded.machine.passThrough(direct, receivingPort: name) else { return nil }
            taken = guarded.handOut(dequeued, wake: &wake, freed: &freed)
            return nil
        }
        if let refusal { WireRejections.record(refusal) }
        guard taken != nil else { return nil }
        wake?.unpark()
        return taken
    }

    /// Messages a pump read after its first (a read-ahead, or one from each
    /// ready connection), from the connections `from` names: queued in
    /// order under one lock, or parked (see the top of this file), moved out
    /// of `batch` (left empty).
    func acceptPumped(
        batch: inout Deque<MessageContent>, from: borrowing PumpedFrom, of transport: PortTransport,
        gaveBack: inout Bool
    ) {
        let nothingParked = transport.counter.parked == 0
        let refusals = state.withGuarded { guarded -> [WireRejectionReason] in
            // The usual case, a stream into an empty queue: the batch
            // becomes the queue, nothing moved message by message.
            if nothingParked, guarded.transport === transport, guarded.admitsWithoutChecks(batch),
               guarded.machine.adoptBatch(&batch, countedLimit: guarded.floodLimit) {
                guarded.readiness?.signalWhileLocked()
                return []
            }
            var refusals: [WireRejectionReason] = []
            var tokens = from.batchTokens().makeIterator()
            while let content = batch.popFirst() {
                let token = tokens.next() ?? 0
                if let refusal = guarded.admitPumped(content, from: token, of: transport, gaveBack: &gaveBack) {
                    refusals.append(refusal)
                }
            }
            return refusals
        }
        for refusal in refusals { WireRejections.record(refusal) }
    }
}

extension PortCore.Guarded {
    /// Queues a message a pump read from connection `token` of `transport`,
    /// or parks it: when it counts and the queue is at its limit, or when
    /// its connection is paused already (its earlier messages wait). The
    /// reason when refused (PeerAdmission.swift), nil when queued or parked.
    mutating func admitPumped(
        _ content: consuming MessageContent, from token: UInt64, of transport: PortTransport, gaveBack: inout Bool
    ) -> WireRejectionReason? {
        let counter = transport.counter
        var parks = false
        if self.transport === transport, !machine.isDead {
            parks = content.countsAgainstLimit && machine.countedMessages >= machine.queueLimit
                || counter.parked > 0 && transport.ledger.withLockedValue { $0.parked.isPaused(token) }
        }
        guard parks else { return queueRemote(content, returningSlotTo: counter, gaveBack: &gaveBack) }
        var pending: MessageContent? = consume content
        let (pause, parked) = transport.ledger.withLockedValue { ledger in
            (pending.take().map { ledger.parked.park($0, from: token) } ?? false, ledger.parked.count)
        }
        // Under this lock, so a slot handed out from now on sees it.
        transport.slots.setParked(parked)
        // No room shows while messages wait for it (a writer of room
        // re-raises it; honest senders then park, and lose nothing).
        counter.clamp(atMost: Int32(clamping: machine.queueLimit - machine.countedMessages - parked))
        if pause { transport.pauseReading(token) }
        return nil
    }
}
