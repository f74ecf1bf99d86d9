// Harbor — a port's transport, back-pressure: senders in other processes
// waiting for a slot, and the shared counter kept honest.
//
// The shared slot counter (Memory/SharedSlots.swift) is every sender's fast
// path and every sender can write it, so it decides nothing here. The
// receiver's truth is private: its limit and the counted messages it has
// queued (P12; Docs/CrossProcess.md, "Back-pressure"). From it:
//
// - Room written into the counter costs nobody a message: a counted
//   message that arrives while the queue is full (its sender believed the
//   room, or took no slot) is parked beside the queue and its connection
//   read no further until a slot frees (HarborPorts' ParkedMessages.swift); the
//   counter is lowered to limit − queued − parked then, and at each look at
//   the waiters. The queue never passes its limit, and a flood sent without
//   slots waits in its sender's own socket.
// - When senders wait (their wait packets are here) while the counter shows
//   no room but the receiver has some, that can be a message in flight (a
//   sender took the last slot and has not sent yet) or a counter written
//   "full", or slots taken and never used. A message in flight arrives
//   within microseconds; so only when the gap is still there at a later
//   look, `suspicionDelay` on (the waiter re-sends its wait packet on a
//   timer, which makes that look happen), the receiver repairs the counter
//   and grants the waiters a slot each through their eventfds, which no
//   other sender can write. A scribbler then stalls only itself: honest
//   senders wait a few milliseconds at worst, and send.
// - Sends from the receiving process never read the counter to decide:
//   they go by the port's own count (HarborPorts' PortCore+Admission.swift),
//   since slots taken that no message holds (a sender killed before its
//   packet left, a grant never used) look like messages in flight here.
import HarborSystem
import HarborPorts

extension PortTransport {

    /// The receiver's private side of back-pressure (under the table lock).
    struct BackPressure {
        /// When a look first found waiters, no room by the counter and room
        /// by the receiver's count; nil while they agree.
        var suspectSince: ContinuousClock.Instant?
        /// Slots granted through eventfds lately, whose messages may still
        /// be on their way: they count as taken until `grantLifetime` passes.
        var grants: [ContinuousClock.Instant] = []
    }

    /// How long the counter and the receiver's count must disagree before
    /// the receiver believes its own count (a message in flight arrives
    /// long before).
    static let suspicionDelay = Duration.milliseconds(2)
    /// How long a granted slot counts as taken while its message has not
    /// arrived (a granted sender sends at once; one that gave up meanwhile
    /// sends nothing, and its slot must come back).
    static let grantLifetime = Duration.milliseconds(50)

    /// A slot was freed: parked messages join the queue first (admitted with
    /// nothing new: HarborPorts' ParkedMessages.swift), then senders in
    /// other processes that wait for one are woken.
    package func slotFreed(port: PortCore) {
        guard counter.waiters > 0 else { return }
        if counter.parked > 0 {
            let admission = port.admit(PortArrivals(), from: self)
            WireRejections.record(admission.refusals)
        }
        guard counter.sendersWaiting > 0 else { return }
        // Their wait packets may still sit in the sockets.
        pump(into: port)
        signalWaiters(port: port)
    }

    /// A wait packet arrived on connection `token`: `eventfd` replaces the
    /// connection's previous waiter (closed, unwoken: a process sharing the
    /// connection whose registration this displaces looks again on its own
    /// timer), so one connection holds one descriptor here however many
    /// wait packets it sends.
    func registerWaiter(_ eventfd: SharedDescriptor, token: UInt64) {
        let replaced = table.withLockedValue { table -> SharedDescriptor? in
            // A connection already closed keeps nothing.
            guard !table.isShutDown, table.connections[token] != nil else { return eventfd }
            defer { slots.setRegisteredWaiters(table.waiters.count) }
            return table.waiters.updateValue(eventfd, forKey: token)
        }
        _ = replaced  // closed here, outside the lock
    }

    /// Wakes or grants the registered waiters as the receiver's own count
    /// says, and repairs the shared counter (see the top of this file).
    func signalWaiters(port: PortCore) {
        let (limit, queued) = port.queueCounts
        // Parked messages take the next slots that free.
        let parked = Int(counter.parked)
        let now = ContinuousClock.now
        let (woken, granted) = table.withLockedValue { table -> ([SharedDescriptor], [SharedDescriptor]) in
            guard !table.waiters.isEmpty else { return ([], []) }
            defer { slots.setRegisteredWaiters(table.waiters.count) }
            if parked > 0 {
                // Messages wait beside the full queue already: a waiting
                // sender joins them at once. Its message parks behind
                // theirs and takes its turn (HarborPorts' ParkedMessages.swift):
                // no room is promised, so none is counted as granted.
                defer { table.waiters.removeAll() }
                return ([], Array(table.waiters.values))
            }
            table.backPressure.grants.removeAll { now - $0 > Self.grantLifetime }
            // The room by the receiver's own count with nothing in flight:
            // the most the counter may show, so lowering it to that is
            // always safe. Grants given lately are not taken off it. A
            // granted message that arrived is in `queued` already (or was
            // received), and one still on its way is in flight like any
            // other, which the receiver cannot see and the counter leaves
            // alone. Taking them off too counted an arrived one twice: each
            // look in the grant's 50 ms lowered the counter by one more than
            // the truth, a slot taken by no message that outlived the grant
            // and refused the receiver's own sends
            // (PhantomSlotTests.P12_aGrantWhoseMessageArrivedLeavesNoSlotTaken).
            let room = limit - queued - parked
            counter.clamp(atMost: Int32(clamping: room))
            if counter.free > 0 {
                table.backPressure.suspectSince = nil
                defer { table.waiters.removeAll() }
                return (Array(table.waiters.values), [])
            }
            // Grants given lately whose messages may still be on their way
            // take from what may be granted now: never more grants than room.
            let grantable = room - table.backPressure.grants.count
            guard grantable > 0 else {
                table.backPressure.suspectSince = nil
                return ([], [])
            }
            guard let since = table.backPressure.suspectSince, now - since >= Self.suspicionDelay else {
                if table.backPressure.suspectSince == nil { table.backPressure.suspectSince = now }
                return ([], [])
            }
            // The gap lasted: believe the receiver's count.
            table.backPressure.suspectSince = nil
            var granted: [SharedDescriptor] = []
            while granted.count < grantable, let (token, waiter) = table.waiters.first {
                table.waiters[token] = nil
                granted.append(waiter)
                table.backPressure.grants.append(now)
            }
            // Waiters beyond the room stay registered for the next freed slot.
            // The counter shows the room less the slots just granted (each
            // granted sender sends without taking one). Earlier grants still
            // on their way are not taken off, as above: if they are, the
            // counter overstates the room for a moment and a message that
            // finds the queue full parks, where an understated room would
            // stay until the next grant.
            counter.repair(free: Int32(clamping: room - granted.count))
            return ([], granted)
        }
        for waiter in granted { Self.signal(waiter, SharedSlots.grant) }
        for waiter in woken { Self.signal(waiter, SharedSlots.wake) }
    }

    /// Writes `value` to a waiter's eventfd (non-blocking: the decoder set
    /// `O_NONBLOCK`, so a full or bogus descriptor costs a failed write).
    static func signal(_ waiter: SharedDescriptor, _ value: UInt64) {
        DescriptorIO.addToCounter(waiter.rawValue, value)
    }
}
