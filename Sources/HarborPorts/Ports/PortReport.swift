// Harbor — one port of this process as `harbor ports` shows it.
import HarborSystem

/// What this process holds of one port, read at one instant: a row of
/// `harbor ports PID` (Darwin: a row of `lsmp`).
package struct PortReport: Sendable, Hashable {
    /// What this process holds of the port.
    package enum Kind: String, Sendable {
        /// The receive right (the port lives here).
        case receive
        /// Send rights to a port received in another process.
        case send
        /// Only send-once rights to a port received in another process.
        case sendOnce = "send-once"
        /// Rights whose port is gone (dead names).
        case dead
    }

    /// The port's number in this process (`PortName.rawValue`).
    package var name: UInt64
    package var kind: Kind
    /// Messages queued (for a receive right; 0 otherwise): in the queue,
    /// plus, for a port other processes send to, the counted messages still
    /// in their connections' sockets by the port's shared slot counter (a
    /// hint a sender could skew, P12; at most the limit).
    package var queued: Int
    /// The queue limit (for a receive right; 0 otherwise).
    package var queueLimit: Int
    /// Live send rights (for a receive right: in this process, plus one per
    /// connection from another process; for a proxy: held here).
    package var sendRights: Int
    /// Live send-once rights made here.
    package var sendOnceRights: Int
    /// Whether a no-senders notification is armed.
    package var noSenders: Bool
    /// Whether a port-destroyed notification is armed.
    package var portDestroyed: Bool
    /// How many dead-name notifications are armed.
    package var deadNames: Int
    /// For a send or send-once right: the process that receives (the
    /// connection's `SO_PEERCRED`, as the kernel reported it).
    package var peer: ProcessIdentity?

    /// A row with nothing queued, counted or armed (a decoder fills it in).
    package init(name: UInt64, kind: Kind) {
        self.name = name
        self.kind = kind
        queued = 0
        queueLimit = 0
        sendRights = 0
        sendOnceRights = 0
        noSenders = false
        portDestroyed = false
        deadNames = 0
        peer = nil
    }

    /// Reads `core` (its lock once; a proxy's peer with one `getsockopt` after).
    package init(_ core: PortCore) {
        let (machine, route, connections, proxyWatches, free) = core.state.withGuarded { guarded in
            (Snapshot(guarded.machine), guarded.route, guarded.transport?.connectionCount ?? 0, guarded.deathWatches.count,
             guarded.transport.map { Int($0.counter.free) })
        }
        name = core.name.rawValue
        sendOnceRights = machine.sendOnceRights
        noSenders = machine.noSenders
        portDestroyed = machine.portDestroyed
        if let route {
            kind = machine.isDead || route.hasHungUp ? .dead : (machine.sendRights > 0 ? .send : .sendOnce)
            queued = 0
            queueLimit = 0
            sendRights = machine.sendRights
            deadNames = machine.deadNames + proxyWatches
            peer = kind == .dead ? nil : try? route.creator()
        } else {
            kind = machine.isDead ? .dead : .receive
            // Slots taken by the counter but not by the queue: still in the sockets.
            let inSockets = free.map { min(machine.queueLimit, max(0, machine.queueLimit - $0 - machine.counted)) } ?? 0
            queued = machine.queued + inSockets
            queueLimit = machine.queueLimit
            sendRights = machine.sendRights + connections
            deadNames = machine.deadNames
            peer = nil
        }
    }

    /// The state machine's counters, copied under the port's lock.
    private struct Snapshot {
        var isDead: Bool
        var queued: Int
        var counted: Int
        var queueLimit: Int
        var sendRights: Int
        var sendOnceRights: Int
        var noSenders: Bool
        var portDestroyed: Bool
        var deadNames: Int

        init(_ machine: borrowing PortStateMachine) {
            isDead = machine.isDead
            queued = machine.queue.count
            counted = machine.countedMessages
            queueLimit = machine.queueLimit
            sendRights = machine.sendRights
            sendOnceRights = machine.sendOnceRights
            noSenders = machine.hasNoSendersRequest
            portDestroyed = machine.hasPortDestroyedRequest
            deadNames = machine.deadNameRequestCount
        }
    }
}
