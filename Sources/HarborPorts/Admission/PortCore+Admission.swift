// Harbor — admission: the one place a message joins a port's queue (P12).
//
// A message sent in this process is admitted by `enqueueLocally`, under the
// port's lock, on the slot its sender took. Everything another process sent
// reaches the port through one call, `admit(_:from:)`, which the transport
// makes once per pump (and once for a queue a receive right brought along):
// under one lock it lets parked messages join first, hands the first
// message straight to a waiting receiver when it may, queues or parks the
// rest, charges each to the uid the kernel named as its sender
// (PortCore+Charges.swift), and sets connections that ended behind parked
// messages aside. The transport acts on what it returns (refusals to count,
// a freed slot to tell waiting senders of) once the lock is released.
//
// Every place here where a message joins the queue (or is handed straight
// to a waiting receiver) also records it in the port's taps, when it has
// any (Tap/: one nil check otherwise; the armed path is out of line).
//
// The only calls out of here into the transport are leaf operations on
// its epoll set (`pauseReading`, `resumeReading`: a connection leaves or
// rejoins the readiness set under the port's lock, so a pause and a resume
// never cross) and reads of its shared counter; nothing comes back into a
// port.
import DequeModule
import HarborSystem

/// What admitting arrivals did, for the transport to act on once the
/// port's lock is released.
package struct PortAdmission: ~Copyable, Sendable {
    /// The first message, handed straight to the pumping receiver.
    package var taken: MessageContent?
    /// Messages refused, each for its sender's uid (the transport counts them).
    package var refusals = AdmissionRefusals()
    /// A message that was not queued gave its sender's slot back.
    package var gaveSlotsBack = false
    /// The taken message freed a slot that senders in other processes, or
    /// parked messages, wait for.
    package var freedSlot = false

    init() {}
}

extension PortCore {
    /// Admits what arrived from other processes through `connections`, the
    /// port's transport when it read them: the one way such a message joins
    /// the queue (see the top of this file). A message the port cannot take
    /// (it died, or moved away, since its packet was read) is dropped and
    /// gives its slot back to `connections`' counter.
    package func admit(_ arrivals: consuming PortArrivals, from connections: any PortConnections) -> PortAdmission {
        var admission = PortAdmission()
        let counter = connections.counter
        let takeFirst = arrivals.takeFirst
        var wake: Parker?
        var freed: (any PortConnections)?
        var endings: [PortArrivals.Ending] = []
        var parkedEnds = 0
        state.withGuarded { guarded in
            let here = guarded.transport === connections && !guarded.machine.isDead
            if here && guarded.ledger.parked.count > 0 {
                parkedEnds = guarded.admitParked(from: connections, counter: counter, into: &admission)
            }
            // Whether anything is parked is read afresh at each step: a
            // message this call parks must keep its connection's later
            // messages behind it (found by the `admission` fuzz target: at
            // a limit of 0, a batch of uncounted messages overtook the
            // counted first one, parked a moment before).
            if let first = arrivals.first.take() {
                let counted = first.countsAgainstLimit
                if takeFirst, here, guarded.ledger.parked.count == 0, guarded.machine.queue.isEmpty,
                   !(counted && guarded.isFlooded) {
                    if let taps = guarded.taps { PortCore.Guarded.record(first, in: taps, depth: 0) }
                    if let dequeued = guarded.machine.passThrough(consume first, receivingPort: name) {
                        admission.taken = guarded.handOut(dequeued, wake: &wake, freed: &freed)
                    }
                } else if let refusal = guarded.admitArrived(
                    first, from: arrivals.firstFrom, source: arrivals.source, through: connections, counter: counter,
                    gaveBack: &admission.gaveSlotsBack) {
                    admission.refusals.append(refusal)
                }
            }
            if arrivals.batch != nil {
                guarded.admit(batch: &arrivals.batch!, from: arrivals.batchFrom, source: arrivals.source,
                              through: connections, counter: counter, into: &admission)
            }
            for ending in arrivals.endings ?? [] {
                // A connection whose messages are parked ends after them.
                if !ending.isSendOnce, guarded.ledger.parked.count > 0,
                   guarded.ledger.parked.parkEnd(of: ending.token) {
                    connections.slots.setParked(guarded.ledger.parked.count)
                    continue
                }
                endings.append(ending)
            }
        }
        wake?.unpark()
        admission.freedSlot = freed != nil
        // Connections closed: every process holding that right let it go.
        // Only send connections park, so a parked end is a send right's.
        for _ in 0..<parkedEnds { sendRightReleased() }
        for ending in endings {
            if ending.isSendOnce { sendOnceReleased(used: ending.used) } else { sendRightReleased() }
        }
        return admission
    }

    /// The queue limit and the counted messages queued: the receiver's own
    /// count, which back-pressure trusts over the shared counter.
    package var queueCounts: (limit: Int, queued: Int) {
        state.withGuarded { ($0.machine.queueLimit, $0.machine.countedMessages) }
    }
}

extension PortCore.Guarded {
    /// Queues a message from this process, by the port's own count, taking
    /// a shared slot once the port has senders in other processes.
    package mutating func enqueueLocally(_ content: MessageContent) -> PortStateMachine.EnqueueOutcome {
        if let slotCounter, content.countsAgainstLimit, !machine.isDead {
            // The port's own count decides here too, as it does for what
            // arrives from other processes (P12): the shared counter is a
            // hint every sender writes, and it can show slots taken that no
            // message holds (a sender killed between taking its slot and
            // sending, a grant its waiter never used, a counter written
            // "full"), which this process cannot tell from a message in
            // flight. Trusting it refused this process's own sends while
            // the queue had room (harbord's relays at check-in, "at its
            // queue limit"), and room written there let them past the limit.
            // Parked messages count: they take the next slots that free.
            guard machine.countedMessages + ledger.parked.count < machine.queueLimit else { return .full }
            // The slot is taken in the counter all the same, past what it
            // shows if need be (no more than that: the usual case is the one
            // compare-and-swap it was), so senders elsewhere see the room go.
            // If it was a message in flight, that one finds the queue full
            // when it arrives and parks, never refused, the limit kept.
            if !slotCounter.tryAcquire() { slotCounter.release(-1) }
            let outcome = machine.enqueue(content, slotReserved: true)
            if taps != nil, case .enqueued = outcome { recordLastQueued() }
            return outcome
        }
        let outcome = machine.enqueue(content)
        if taps != nil, case .enqueued = outcome { recordLastQueued() }
        return outcome
    }

    /// Whether counted messages from other processes are past limit + 1024:
    /// senders there hold shared slots, so only a lying process gets here.
    var isFlooded: Bool { machine.countedMessages >= floodLimit }

    /// The most counted messages from other processes the queue takes.
    var floodLimit: Int { PortStateMachine.maximumQueueLimit + machine.queueLimit }

    /// Messages after the first, queued in order, or parked (moved out of
    /// `batch`, left empty).
    fileprivate mutating func admit(
        batch: inout Deque<MessageContent>, from runs: ConnectionRuns, source: PortArrivals.Source,
        through connections: any PortConnections, counter: SharedSlots.Counter, into admission: inout PortAdmission
    ) {
        // The usual case, a stream into an empty queue: the batch becomes
        // the queue, nothing moved message by message.
        if case .connections = source, ledger.parked.count == 0, transport === connections, admitsWithoutChecks(batch),
           machine.adoptBatch(&batch, countedLimit: floodLimit) {
            if taps != nil { recordLastQueued(count: machine.queue.count) }
            readiness?.signalWhileLocked()
            return
        }
        var tokens = runs.tokens()
        while let content = batch.popFirst() {
            let token = tokens.next() ?? 0
            if let refusal = admitArrived(content, from: token, source: source, through: connections, counter: counter,
                                          gaveBack: &admission.gaveSlotsBack) {
                admission.refusals.append(refusal)
            }
        }
    }

    /// Queues a message that arrived from connection `token`, or parks it:
    /// when it came from the connections, counts, and the queue is at its
    /// limit, or when its connection is paused already (its earlier
    /// messages wait). The reason when refused, nil when queued or parked.
    fileprivate mutating func admitArrived(
        _ content: consuming MessageContent, from token: UInt64, source: PortArrivals.Source,
        through connections: any PortConnections, counter: SharedSlots.Counter, gaveBack: inout Bool
    ) -> AdmissionRefusal? {
        var parks = false
        if case .connections = source, transport === connections, !machine.isDead {
            parks = content.countsAgainstLimit && machine.countedMessages >= machine.queueLimit
                || ledger.parked.count > 0 && ledger.parked.isPaused(token)
        }
        guard parks else { return queueRemote(content, returningSlotTo: counter, gaveBack: &gaveBack) }
        let pause = ledger.parked.park(content, from: token)
        let parked = ledger.parked.count
        // Under this lock, so a slot handed out from now on sees it.
        connections.slots.setParked(parked)
        // No room shows while messages wait for it (a writer of room
        // re-raises it; honest senders then park, and lose nothing).
        counter.clamp(atMost: Int32(clamping: machine.queueLimit - machine.countedMessages - parked))
        if pause { connections.pauseReading(token) }
        return nil
    }

    /// Parked messages join the queue while it has room, oldest first, one
    /// per connection per turn (ParkedMessages.swift); connections left with
    /// nothing parked are read again. Returns how many connection ends came
    /// out with them (their closings are counted after the lock).
    fileprivate mutating func admitParked(
        from connections: any PortConnections, counter: SharedSlots.Counter, into admission: inout PortAdmission
    ) -> Int {
        let room = machine.queueLimit - machine.countedMessages
        guard room > 0 else { return 0 }
        let (messages, ends, resumed) = ledger.parked.release(room: room)
        connections.slots.setParked(ledger.parked.count)
        for content in messages {
            // Within the limit now: refused only past the uid's other
            // limits (descriptors, region bytes), its own business.
            if let refusal = queueRemote(content, returningSlotTo: counter, gaveBack: &admission.gaveSlotsBack) {
                admission.refusals.append(refusal)
            }
        }
        for token in resumed { connections.resumeReading(token) }
        return ends
    }

    /// Queues a message from another process on the slot its sender took,
    /// and signals readiness when the queue stops being empty (only the
    /// pumping receiver is woken: no contended-lock cost in writing under
    /// the lock). The reason when refused (PortCore+Charges.swift: past the
    /// limit, or its uid past what it may hold), nil when queued.
    private mutating func queueRemote(_ content: consuming MessageContent) -> AdmissionRefusal? {
        if let refusal = admissionRefusal(for: content) { return refusal }
        let outcome = machine.enqueue(content, slotReserved: true)
        if case .enqueued(let becameReadable) = outcome {
            if taps != nil { recordLastQueued() }
            if becameReadable { readiness?.signalWhileLocked() }
        }
        return nil
    }

    /// `queueRemote`, for a message whose sender took a slot of `counter`
    /// for it (if it counts). One that is not queued (refused, or the port
    /// dead or moved away since the packet was read, when it is dropped)
    /// gives the slot back there, exactly once (P12): a slot kept by a
    /// message nobody will receive would fill the port for everyone.
    private mutating func queueRemote(
        _ content: consuming MessageContent, returningSlotTo counter: SharedSlots.Counter, gaveBack: inout Bool
    ) -> AdmissionRefusal? {
        let counted = content.countsAgainstLimit
        let here = !location.isProxy && !machine.isDead
        let refusal = here ? queueRemote(content) : nil
        guard counted, !here || refusal != nil else { return refusal }
        counter.release()
        gaveBack = true
        if here, machine.countedMessages >= machine.queueLimit {
            // Admission lowered the counter to the room the queue has (past
            // the limit): the slot given back must not show as room.
            _ = counter.clamp(atMost: Int32(clamping: machine.queueLimit - machine.countedMessages))
        }
        return refusal
    }
}
