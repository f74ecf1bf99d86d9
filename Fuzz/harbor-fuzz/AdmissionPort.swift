// Harbor fuzzing — the one port the `admission` target uses for every input,
// made once per process, and its reset between inputs.
//
// A new port per input cost more than the input itself: a `PortCore` and
// its lock, a registry record keyed by its slot counter's file (an `fstat`),
// and its destruction (the record pruned, several locks). So the port, its
// connections and its slot counter are made once, and before each input
// everything an input can change is put back as a new port has it: the
// state machine (queue, counts, limit, rights, sequence number) and the
// ledger (charges, parked messages) replaced by new ones, the connections'
// record of pauses cleared, the counter repaired to the default limit's free
// slots. The reset is checked, field by field, including what it does not
// assign (readiness, location, set, counter, the process-wide budget of
// moved bodies, the registry), after each input and again before the next:
// an input starts from exactly the state of any other, so a finding replays
// alone.
@testable import HarborPorts
import HarborSystem

final class AdmissionPort: @unchecked Sendable {
    // @unchecked: used by one fuzzing thread only.
    /// Kept for the life of the process: the port never dies.
    private let right: ReceiveRight
    let core: PortCore
    let connections: FuzzConnections
    private let slots: SharedSlots
    /// The registry's records once the port was made (checked after each reset).
    private let registered: Int

    /// Makes the port and attaches `slots` and connections that read nothing.
    init(slots: SharedSlots) {
        self.slots = slots
        right = ReceiveRight()
        core = right.core
        let fake = FuzzConnections(slots: slots)
        connections = fake
        do {
            _ = try core.attachConnections { _ throws(PortError) in fake }
        } catch {
            fail("admission: a new port refused its connections: \(error)")
        }
        registered = PortRegistry.count
    }

    /// Puts the port back as it was made, then checks that it is.
    func reset() {
        let (old, parked) = core.state.withGuarded { guarded -> (PortStateMachine, [MessageContent]) in
            var machine = PortStateMachine()
            swap(&machine, &guarded.machine)
            return (machine, guarded.ledger.reset())
        }
        // Dropped outside the lock, as a port's destruction drops them.
        _ = old
        _ = parked
        connections.paused = 0
        connections.refusedOnFreedSlots = 0
        slots.counter.repair(free: Int32(PortStateMachine.defaultQueueLimit))
        slots.setParked(0)
        slots.setRegisteredWaiters(0)
        check()
    }

    /// Fails unless the port is exactly as a new one with these connections.
    func check() {
        let problem = core.state.withGuarded { guarded -> String? in
            let machine = guarded.machine
            if !machine.queue.isEmpty || machine.countedMessages != 0 { return "its queue is not empty" }
            if machine.queueLimit != PortStateMachine.defaultQueueLimit { return "its limit is \(machine.queueLimit)" }
            if machine.sendRights != 0 || machine.sendOnceRights != 0 || machine.madeSendRights != 0 {
                return "it counts rights"
            }
            if machine.sequenceNumber != 0 || machine.isDead || machine.hasNoSendersRequest {
                return "its sequence number, death or requests remain"
            }
            if guarded.ledger.parked.count != 0 || !guarded.ledger.total.isZero { return "its ledger is not empty" }
            for token in 1...UInt64(AdmissionTarget.connections) where guarded.ledger.parked.isPaused(token) {
                return "connection \(token) is still paused"
            }
            if guarded.readiness != nil || guarded.readinessFD != -1 || guarded.set != nil { return "it has readiness or a set" }
            if !guarded.watchers.isEmpty || !guarded.deathWatches.isEmpty || guarded.sharesExports
                || guarded.sharedExport != nil {
                return "it has watches or an export"
            }
            guard let transport = guarded.transport, transport === connections,
                  transport.slots === slots, guarded.slotCounter != nil else { return "its connections changed" }
            return nil
        }
        if let problem { fail("admission: the reused port is not reset: \(problem)") }
        let counter = slots.counter
        guard counter.free == Int32(PortStateMachine.defaultQueueLimit), counter.parked == 0,
              counter.sendersWaiting == 0 else {
            fail("admission: the slot counter is not reset (free \(counter.free), parked \(counter.parked))")
        }
        guard connections.paused == 0, connections.refusedOnFreedSlots == 0 else {
            fail("admission: the connections' record is not reset")
        }
        guard PeerLedger.movedInlineHeld == 0, PortRegistry.count == registered else {
            fail("admission: process-wide state grew (moved bodies \(PeerLedger.movedInlineHeld), "
                 + "registry \(PortRegistry.count), was \(registered))")
        }
    }
}
