// Harbor — a port's life across processes: exporting and importing rights,
// moving the receive right, and hearing of deaths the kernel reports.
import DequeModule
import Synchronization
import HarborSystem
import HarborPorts

extension PortCore {
    // MARK: Receiving from other processes

    /// The port's transport, made on first need together with its readiness
    /// set and its shared slot counter (free slots = limit - queued).
    func ensureTransport() throws(PortError) -> PortTransport {
        if let existing = state.withGuarded({ $0.portTransport }) { return existing }
        let epollFD = try readinessDescriptor()
        let result = state.withGuarded { guarded -> Result<PortTransport, PortError> in
            switch guarded.location {
            case .receiving(let existing): return .success(existing as! PortTransport)  // only HarborTransport makes one
            case .proxy: return .failure(PortError(.invalidRight, "\(name) is received in another process"))
            case .local: break
            }
            do {
                let free = guarded.machine.queueLimit - guarded.machine.countedMessages
                let transport = PortTransport(slots: try SharedSlots(free: free), epollFD: epollFD)
                guarded.location = .receiving(transport)
                return .success(transport)
            } catch let error as SystemError {
                return .failure(PortError(error, "preparing \(name) for other processes"))
            } catch {
                preconditionFailure("SharedSlots.init throws only SystemError")
            }
        }
        switch result {
        case .success(let transport):
            PortRegistry.register(self)
            // A local receiver may be asleep on the eventfd alone: make it look
            // again, now through the transport (see `dequeue(deadline:)`).
            // Nobody else is nudged: a run loop or port set watches the epoll
            // set, which the connections join, and would wake for nothing.
            let (readiness, wantsHangUps) = state.withGuarded { ($0.readiness, $0.machine.hasNoSendersRequest) }
            if let readiness, readiness.hasSleepers { readiness.nudge() }
            if wantsHangUps { transport.watchHangUps(for: self) }
            return transport
        case .failure(let error):
            throw error
        }
    }

    /// A message that arrived with a receive right moved in: queue it on
    /// its slot of the port's counter.
    func acceptRemote(_ content: consuming MessageContent) {
        var gaveBack = false
        acceptRemote(content, slots: nil, gaveBack: &gaveBack)
    }

    /// A message decoded from a connection of the transport whose counter is
    /// `slots` (nil: the port's own): queue it on its slot, or, refused,
    /// give the slot back there (`gaveBack` set).
    func acceptRemote(_ content: consuming MessageContent, slots: SharedSlots.Counter?, gaveBack: inout Bool) {
        // Moved into the queue, not copied: the closure takes it out of here.
        var pending: MessageContent? = consume content
        let refusal = state.withGuarded { $0.queueRemote(pending.take()!, returningSlotTo: slots, gaveBack: &gaveBack) }
        if let refusal { WireRejections.record(refusal) }
    }

    /// A connection closed: every process holding that right let it go.
    func connectionClosed(_ kind: WireFormat.ConnectionKind, used: Bool) {
        switch kind {
        case .send: sendRightReleased()
        case .sendOnce: sendOnceReleased(used: used)
        }
    }

    // MARK: Exporting rights

    /// Prepares `right` to leave the process inside a message.
    static func export(_ right: CarriedRight) throws(PortError) -> ExportedRight {
        switch right {
        case .taken:
            return ExportedRight(kind: .taken, identity: PortIdentity(origin: 0, number: 0), descriptors: [])
        case .send(let token):
            return try token.port.exportSend()
        case .sendOnce(let token):
            // The right leaves; the connection stands for it from now on.
            _ = token.markUsed()
            var exported = try token.port.exportSendOnce()
            let withdraw = exported.undo
            exported.undo = {
                withdraw?()
                token.markUnused()
            }
            return exported
        case .receive(let token):
            return try token.port.exportReceive()
        }
    }

    private func exportSend() throws(PortError) -> ExportedRight {
        if let route = state.withGuarded({ $0.remoteRoute }), let slots = route.slots {
            return ExportedRight(kind: .send, identity: identity, descriptors: [route.socket, slots.descriptor])
        }
        let transport = try ensureTransport()
        if let shared = state.withGuarded({ $0.sharedExport }) {
            return ExportedRight(kind: .send, identity: identity, descriptors: [shared, transport.slots.descriptor])
        }
        do {
            let socket = try transport.makeConnection(.send)
            sendRightMade()
            // Kept open here, so the connection counts as one send right for as
            // long as the port shares it (an export that raced this one keeps its own).
            state.withGuarded { guarded in
                if guarded.sharesExports, guarded.sharedExport == nil { guarded.sharedExport = socket }
            }
            return ExportedRight(kind: .send, identity: identity, descriptors: [socket, transport.slots.descriptor])
        } catch {
            throw PortError(error, "exporting a send right to \(name)")
        }
    }

    private func exportSendOnce() throws(PortError) -> ExportedRight {
        if let route = state.withGuarded({ $0.remoteRoute }) {
            return ExportedRight(kind: .sendOnce, identity: identity, descriptors: [route.socket])
        }
        let transport = try ensureTransport()
        do {
            let (socket, token) = try transport.makeWithdrawableConnection(.sendOnce)
            sendOnceMade()
            // Should the send fail, the connection goes without its closing
            // being reported: the right it stood for is still in the message.
            let undo = { [self] in
                if let token { transport.withdraw(token) }
                state.withGuarded { $0.machine.sendOnceReleased() }
            }
            return ExportedRight(kind: .sendOnce, identity: identity, descriptors: [socket], undo: undo)
        } catch {
            throw PortError(error, "exporting a send-once right to \(name)")
        }
    }

    /// Moves the receive right out: the queue, the connections, the slot
    /// counter and the notification requests travel; this object becomes a
    /// proxy for the local send rights that remain, through one new
    /// connection that travels too. Should the send fail, `undo` makes it
    /// the port again, with all of that back (`restoreAfterFailedMove`).
    private func exportReceive() throws(PortError) -> ExportedRight {
        let transport = try ensureTransport()
        let forwarder: (receiving: SharedDescriptor, sending: SharedDescriptor)
        do {
            let pair = try SeqPacketSocket.makePair()
            try SeqPacketSocket.passCredentials(pair.0.rawValue)
            forwarder = pair
        } catch {
            throw PortError(error, "moving the receive right of \(name)")
        }
        let route = RemoteRoute(socket: forwarder.sending, slots: transport.slots)
        let taken = state.withGuarded { guarded in
            var taken = guarded.machine.takeForMove()
            // Messages parked off the full queue travel behind it
            // (Transport/PortTransport+Parking.swift).
            taken.queue.append(contentsOf: transport.takeParked())
            guarded.location = .proxy(route)
            guarded.readiness?.clearWhileEmpty()
            // The shared connection travels as one of the port's connections;
            // its holders here and elsewhere keep it open, this copy goes.
            guarded.sharedExport = nil
            guarded.sharesExports = false
            return taken
        }
        // Known from now on as a proxy, by the connection it sends through.
        PortRegistry.register(self)
        let set = join(nil)
        set?.removeMember(name)
        let moved = transport.takeConnections()
        transport.shutDown()
        var connections = moved
        connections.append((.send, forwarder.receiving))
        // Local senders that waited for room now send through the route.
        for parker in taken.blocked { parker.unpark() }
        var requests: [(kind: WireFormat.RequestKind, target: CarriedRight)] = []
        if let target = taken.noSenders { requests.append((.noSenders, .sendOnce(target))) }
        if let target = taken.portDestroyed { requests.append((.portDestroyed, .sendOnce(target))) }
        let transfer = ExportedTransfer(
            queueLimit: taken.limit, sequenceNumber: taken.sequenceNumber, madeSendRights: taken.made,
            connections: connections, requests: requests, queued: Array(taken.queue))
        let slots = transport.slots
        let undo = { [self] in
            restoreAfterFailedMove(route: route, slots: slots, connections: moved,
                                   forwarder: forwarder.receiving, taken: taken)
        }
        return ExportedRight(kind: .receive, identity: identity, descriptors: [transport.slots.descriptor],
                             transfer: transfer, undo: undo)
    }

    /// The send that carried the receive right away failed: the port is
    /// here again, exactly as it left. Its connections and slot counter come
    /// back under a new transport; the forwarder's receiving end becomes a
    /// connection too, so whatever local senders sent through the route
    /// meanwhile is received, and its closing balances its count.
    private func restoreAfterFailedMove(
        route: RemoteRoute, slots: SharedSlots, connections: [(kind: WireFormat.ConnectionKind, socket: SharedDescriptor)],
        forwarder: SharedDescriptor, taken: PortStateMachine.Moving
    ) {
        guard let epollFD = try? readinessDescriptor() else { return }
        let transport = PortTransport(slots: slots, epollFD: epollFD)
        var signal: ReadinessSignal?
        let released = state.withGuarded { guarded -> [SendOnceToken]? in
            guard guarded.route === route, !guarded.machine.isDead else { return nil }
            guarded.location = .receiving(transport)
            guarded.machine.connectionAdopted()
            let (released, becameReadable) = guarded.machine.restoreAfterFailedMove(taken)
            if becameReadable, let readiness = guarded.readiness {
                readiness.announce()
                signal = readiness
            }
            return released
        }
        guard let released else { return }
        _ = released  // replaced by requests made meanwhile: released here, outside the lock
        PortRegistry.register(self)
        for (kind, socket) in connections { _ = try? transport.adopt(socket, kind: kind) }
        _ = try? transport.adopt(forwarder, kind: .send)
        // A no-senders request still stands: its connections are watched again.
        if state.withGuarded({ $0.machine.hasNoSendersRequest }) { transport.watchHangUps(for: self) }
        if let signal, signal.signalAfterUnlock() { clearSpuriousReadiness() }
        // Remote senders that waited for a slot were woken by the shut-down
        // and register again; wake any that registered meanwhile.
        transport.slotFreed(port: self)
    }

    // MARK: Deaths in other processes

    /// A dead-name request on a proxy: the target port watches the
    /// connection for hang-up, so the notification comes without a thread.
    func requestRemoteDeadName(_ target: SendOnceToken, route: RemoteRoute) {
        if route.hasHungUp { remoteDied() }
        if let immediate = state.withGuarded({ $0.machine.requestDeadName(target) }) {
            NotificationDelivery.deliver(.deadName, about: name, to: immediate)
            return
        }
        let watcher = target.port
        if watcher.state.withGuarded({ $0.location.isProxy }) {
            // The notification port is in another process: nobody here
            // receives on it, so a watching thread hears the hang-up.
            guard let token = RemoteDeathWatch.shared.add(self, socket: route.socket.rawValue) else { return }
            state.withGuarded { $0.deathWatches.append(token) }
            if route.hasHungUp { remoteDied() }
            return
        }
        guard let transport = try? watcher.ensureTransport(),
              let token = try? transport.addWatch(on: route, for: self) else { return }
        state.withGuarded { $0.watchers.append(ProxyWatch(transport: transport, token: token)) }
        // It may have died between the first look and the watch.
        if route.hasHungUp { remoteDied() }
    }
}

extension PortCore.Guarded {
    /// Whether counted messages from other processes are past limit + 1024:
    /// senders there hold shared slots, so only a lying process gets here.
    var isFlooded: Bool { machine.countedMessages >= floodLimit }

    /// The most counted messages from other processes the queue takes.
    var floodLimit: Int { PortStateMachine.maximumQueueLimit + machine.queueLimit }

    /// Queues a message from another process on the slot its sender took,
    /// and signals readiness when the queue stops being empty (only the
    /// pumping receiver is woken: no contended-lock cost in writing under
    /// the lock). The reason when refused (Transport/PeerAdmission.swift:
    /// past the limit, or its uid past what it may hold), nil when queued.
    mutating func queueRemote(_ content: consuming MessageContent) -> WireRejectionReason? {
        if let refusal = admissionRefusal(for: content) { return refusal }
        if case .enqueued(true) = machine.enqueue(content, slotReserved: true) {
            readiness?.signalWhileLocked()
        }
        return nil
    }

    /// `queueRemote`, for a message read from a connection whose transport
    /// counts slots on `slots` (nil: this port's counter). Its sender took a
    /// slot for a counted message; one that is not queued (refused, or the
    /// port dead or moved away since the packet was read, when it is
    /// dropped) gives the slot back there, exactly once (P12): a slot kept
    /// by a message nobody will receive would fill the port for everyone.
    mutating func queueRemote(
        _ content: consuming MessageContent, returningSlotTo slots: SharedSlots.Counter?, gaveBack: inout Bool
    ) -> WireRejectionReason? {
        let counted = content.countsAgainstLimit
        let here = !location.isProxy && !machine.isDead
        let refusal = here ? queueRemote(content) : nil
        guard counted, !here || refusal != nil, let counter = slots ?? slotCounter else { return refusal }
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
