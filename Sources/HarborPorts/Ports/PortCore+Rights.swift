// Harbor — a port's rights: counted as the token objects are made and
// released, and the notifications they ask for or cause.

import DequeModule
import HarborSystem

extension PortCore {
    /// A send right to the port was made (called by the token objects, as all here).
    package func sendRightMade() { state.withGuarded { $0.machine.sendRightMade() } }

    /// A send right was released: the last one fires no-senders.
    package func sendRightReleased() {
        // One critical section: the count and where the port is, together.
        let (target, isProxy) = state.withGuarded { ($0.machine.sendRightReleased(), $0.location.isProxy) }
        // A proxy's count is its own business: the connection it holds is
        // what the receiving process counts. (A target is released here,
        // outside the lock, either way.)
        guard let target, !isProxy else { return }
        NotificationDelivery.deliver(.noSenders, about: name, to: target)
    }

    /// A send-once right to the port was made.
    package func sendOnceMade() { state.withGuarded { $0.machine.sendOnceMade() } }

    /// A send-once right was used, or released unused (a send-once notification).
    package func sendOnceReleased(used: Bool) {
        let isProxy = state.withGuarded { guarded in
            guarded.machine.sendOnceReleased()
            return guarded.location.isProxy
        }
        // A proxy's unused right is reported by the receiving process, which
        // sees its connection close without a message.
        if !used && !isProxy {
            deliverNotification(NotificationDelivery.content(.sendOnce, about: name))
        }
    }

    /// Asks for a no-senders notification to `target`, replacing an earlier request.
    package func requestNoSenders(_ target: SendOnceToken) {
        let (replaced, transport) = state.withGuarded { ($0.machine.requestNoSenders(target), $0.transport) }
        _ = replaced  // released here, outside the lock: its owner gets a send-once notification
        // Senders in other processes: their going must be heard though
        // nobody receives here (PortTransport+HangUps.swift).
        transport?.watchHangUps(for: self)
    }

    /// Asks for the receive right to go to `target` when it would be destroyed.
    package func requestPortDestroyed(_ target: SendOnceToken) {
        let replaced = state.withGuarded { $0.machine.requestPortDestroyed(target) }
        _ = replaced
    }

    /// Asks for a dead-name notification to `target` when the port dies.
    package func requestDeadName(_ target: SendOnceToken) {
        if let route = state.withGuarded({ $0.route }) {
            route.requestDeadName(of: self, notifying: target)
            return
        }
        if let immediate = state.withGuarded({ $0.machine.requestDeadName(target) }) {
            NotificationDelivery.deliver(.deadName, about: name, to: immediate)
        }
    }

    /// The receive right was released: the port is handed off or destroyed.
    package func receiveRightReleased() {
        // A receive right that moved to another process leaves its token
        // behind to die here; the port lives on over there.
        if state.withGuarded({ $0.location.isProxy }) { return }
        let outcome = state.withGuarded { $0.machine.receiveRightReleased() }
        switch outcome {
        case .handOff(let target):
            // The receive right travels to the requester with its queue intact.
            // If that port is dead the new token dies too and we come back here,
            // with the request gone, and are destroyed for real.
            let token = ReceiveRightToken(port: self)
            NotificationDelivery.deliver(.portDestroyed, about: name, to: target, carrying: .receive(token))
        case .destroyed(let destruction):
            finishDestruction(destruction)
        }
    }

    private func finishDestruction(_ destruction: PortStateMachine.Destruction) {
        let set = join(nil)
        set?.removeMember(name)
        // Dropping the signal closes the descriptor (once no sender still
        // holds it), which also takes it out of any epoll set.
        // Parked messages are dropped once the lock is released: their rights take locks.
        let (transport, parked, taps) = state.withGuarded {
            guarded -> ((any PortConnections)?, [MessageContent], [PortTapBuffer]?) in
            defer { guarded.location = .local }
            return (guarded.transport, guarded.ledger.reset(), guarded.taps.take())
        }
        _ = parked
        // The port's taps end: their readers get what is left, then nothing.
        for tap in taps ?? [] { tap.end() }
        // Closing the connections is what tells senders in other processes.
        transport?.shutDown()
        let readiness = state.withGuarded { guarded -> ReadinessSignal? in
            guarded.readinessFD = -1
            return guarded.readiness.take()
        }
        _ = readiness
        let readinessSet = state.withLock { $0.readinessSet.take() }
        _ = readinessSet
        for parker in destruction.blockedSenders { parker.unpark() }
        for target in destruction.deadNameTargets {
            NotificationDelivery.deliver(.deadName, about: name, to: target)
        }
        // `destruction.drained` and the no-senders target are released when
        // `destruction` goes out of scope: their rights die with them.
    }

    /// The receiving process of this proxy is gone: fire its dead-name requests.
    package func remoteDied() {
        let destruction = state.withGuarded { guarded -> PortStateMachine.Destruction? in
            guard guarded.location.isProxy, !guarded.machine.isDead else { return nil }
            return guarded.machine.destroy()
        }
        guard let destruction else { return }
        let deathWatches = state.withGuarded { guarded in
            defer { guarded.deathWatches.removeAll() }
            return guarded.deathWatches
        }
        if !deathWatches.isEmpty { state.withGuarded { $0.route }?.cancelDeathWatches(deathWatches) }
        for target in destruction.deadNameTargets {
            NotificationDelivery.deliver(.deadName, about: name, to: target)
        }
    }

    /// Whether this object is the port itself rather than a proxy.
    package var isReceivingHere: Bool { state.withGuarded { !$0.location.isProxy } }
}
