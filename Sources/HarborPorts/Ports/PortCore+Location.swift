// Harbor — where a port is: here alone, here and reachable from other
// processes, or a proxy for a port received in another process.
//
// One enum, so a port can be only one of them (issue 13): a proxy has a
// route and never a transport, a port received here has a transport once
// other processes can send to it and never a route.
import HarborSystem

extension PortCore {
    /// Where a port's receive right is, and how messages reach it.
    package enum Location {
        /// Received here; no process but this one sends to it (no
        /// descriptor of it has left).
        case local
        /// Received here; other processes send through the connections of
        /// `transport`, which holds the port's shared slot counter.
        case receiving(any PortConnections)
        /// The receive right lives in another process: every send goes
        /// through `route`. The port was imported with a send or send-once
        /// right, or its own receive right moved away.
        case proxy(any PortRoute)

        package var isProxy: Bool {
            if case .proxy = self { true } else { false }
        }
    }
}

extension PortCore.Guarded {
    /// The connection every send goes through, for a proxy.
    package var route: (any PortRoute)? {
        if case .proxy(let route) = location { route } else { nil }
    }

    /// The connections from other processes, for a port received here
    /// that has them.
    package var transport: (any PortConnections)? {
        if case .receiving(let transport) = location { transport } else { nil }
    }
}

extension PortCore {
    /// The process messages to this port reach (`SendRight.receivingProcess`).
    package var receivingProcess: ProcessIdentity? {
        guard let route = state.withGuarded({ $0.route }) else { return .current }
        return try? route.creator()
    }

    /// Descriptors this process holds for the port: for a port received
    /// here, its readiness eventfd and epoll set, its slot counter and one
    /// per connection once other processes can reach it; for a proxy, its
    /// connection and (for a send right) the port's slot counter.
    package var heldDescriptors: Int {
        let (route, transport, readiness) = state.withGuarded { ($0.route, $0.transport, $0.readinessFD >= 0) }
        if let route { return route.slots == nil ? 1 : 2 }
        let ready = readiness ? 2 : 0
        guard let transport else { return ready }
        return ready + 1 + transport.connectionCount
    }
}

// MARK: Moving between locations
//
// The transport (HarborTransport) changes where a port is only through
// these calls: each takes the port's lock once, and calls nothing of the
// transport's under it but what its arguments name.

extension PortCore {
    /// The port's connections from other processes, if it is received here
    /// and has them.
    package var connections: (any PortConnections)? { state.withGuarded { $0.transport } }

    /// The connection every send goes through, for a proxy.
    package var route: (any PortRoute)? { state.withGuarded { $0.route } }

    /// Whether a no-senders request stands (the connections are then
    /// watched for hang-up).
    package var wantsNoSenders: Bool { state.withGuarded { $0.machine.hasNoSendersRequest } }

    /// The port's connections, made by `make` (given the queue's free
    /// slots) if the port has none yet: a port received here becomes
    /// reachable from other processes. Fails for a proxy. A receiver asleep
    /// on the eventfd alone is nudged to look again through them, and a
    /// standing no-senders request has them watched for hang-up.
    package func attachConnections(
        making make: (_ freeSlots: Int) throws(PortError) -> any PortConnections
    ) throws(PortError) -> any PortConnections {
        let result = state.withGuarded { guarded -> Result<(any PortConnections, isNew: Bool), PortError> in
            switch guarded.location {
            case .receiving(let existing): return .success((existing, false))
            case .proxy: return .failure(PortError(.invalidRight, "\(name) is received in another process"))
            case .local: break
            }
            do throws(PortError) {
                let made = try make(guarded.machine.queueLimit - guarded.machine.countedMessages)
                guarded.location = .receiving(made)
                return .success((made, true))
            } catch {
                return .failure(error)
            }
        }
        let (connections, isNew) = try result.get()
        guard isNew else { return connections }
        PortRegistry.register(self)
        // A local receiver may be asleep on the eventfd alone: make it look
        // again, now through the connections (see `dequeue(deadline:)`).
        // Nobody else is nudged: a run loop or port set watches the epoll
        // set, which the connections join, and would wake for nothing.
        let (readiness, wantsHangUps) = state.withGuarded { ($0.readiness, $0.machine.hasNoSendersRequest) }
        if let readiness, readiness.hasSleepers { readiness.nudge() }
        if wantsHangUps { connections.watchHangUps(for: self) }
        return connections
    }

    /// The sending end of the connection send rights exported from here
    /// share, once made (``ReceiveRight/shareExportedConnection()``).
    package var sharedExport: SharedDescriptor? { state.withGuarded { $0.sharedExport } }

    /// Keeps `socket` as the shared exported connection if the port shares
    /// one and has none yet (an export that raced this one keeps its own).
    package func offerSharedExport(_ socket: SharedDescriptor) {
        state.withGuarded { guarded in
            if guarded.sharesExports, guarded.sharedExport == nil { guarded.sharedExport = socket }
        }
    }

    /// A send-once right counted by `sendOnceMade()` never left: uncounted,
    /// with no notification (the right it stood for is still in the message).
    package func sendOnceWithdrawn() { state.withGuarded { $0.machine.sendOnceReleased() } }

    /// The receive right leaves the process: takes the queue (parked
    /// messages behind it), the counts and the requests out, and makes this
    /// object a proxy sending through `route`. What the ledger charged goes
    /// (the messages travel with the right).
    package func moveOut(through route: any PortRoute) -> PortStateMachine.Moving {
        state.withGuarded { guarded in
            var taken = guarded.machine.takeForMove()
            taken.queue.append(contentsOf: guarded.ledger.reset())
            guarded.location = .proxy(route)
            guarded.readiness?.clearWhileEmpty()
            // The shared connection travels as one of the port's connections;
            // its holders here and elsewhere keep it open, this copy goes.
            guarded.sharedExport = nil
            guarded.sharesExports = false
            return taken
        }
    }

    /// The send that carried the receive right away failed: the port is
    /// here again with what `moveOut` took, received through `connections`
    /// (one more connection than it left with: the route's other end).
    /// False, and nothing done, if the port is no longer the proxy of
    /// `route` or died meanwhile.
    package func moveBack(from route: any PortRoute, to connections: any PortConnections,
                          _ taken: PortStateMachine.Moving) -> Bool {
        var signal: ReadinessSignal?
        let released = state.withGuarded { guarded -> [SendOnceToken]? in
            guard let current = guarded.route, current === route, !guarded.machine.isDead else { return nil }
            guarded.location = .receiving(connections)
            guarded.machine.connectionAdopted()
            let (released, becameReadable) = guarded.machine.restoreAfterFailedMove(taken)
            if becameReadable, let readiness = guarded.readiness {
                readiness.announce()
                signal = readiness
            }
            return released
        }
        guard let released else { return false }
        _ = released  // replaced by requests made meanwhile: released here, outside the lock
        PortRegistry.register(self)
        if let signal, signal.signalAfterUnlock() { clearSpuriousReadiness() }
        return true
    }

    /// A receive right moved in: this object (new, or a proxy the move
    /// proved to stand for the port) becomes the port, received through
    /// `connections`, with the moved counts. Returns the route it sent
    /// through as a proxy, to be let go outside the lock.
    package func moveIn(to connections: any PortConnections, limit: Int, sequenceNumber: UInt64,
                        made: UInt64) -> (any PortRoute)? {
        let old = state.withGuarded { guarded -> (any PortRoute)? in
            let old = guarded.route
            guarded.location = .receiving(connections)
            guarded.machine.adopt(limit: limit, sequenceNumber: sequenceNumber, made: made)
            return old
        }
        PortRegistry.register(self)
        return old
    }

    /// Records a dead-name request on a proxy; false if the port is dead
    /// already (the notification is then delivered at once).
    package func recordDeadNameRequest(_ target: SendOnceToken) -> Bool {
        guard let immediate = state.withGuarded({ $0.machine.requestDeadName(target) }) else { return true }
        NotificationDelivery.deliver(.deadName, about: name, to: immediate)
        return false
    }

    /// Keeps the token of a watch this proxy holds in the process's death
    /// watch (cancelled through the route when the proxy goes).
    package func keepDeathWatch(_ token: UInt64) { state.withGuarded { $0.deathWatches.append(token) } }

    /// Keeps a watch this proxy registered on a local port's connections.
    package func keepWatcher(_ watch: ProxyWatch) { state.withGuarded { $0.watchers.append(watch) } }
}
