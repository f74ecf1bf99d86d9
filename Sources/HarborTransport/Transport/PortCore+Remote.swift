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
        if let existing = portTransport { return existing }
        let epollFD = try readinessDescriptor()
        let connections = try attachConnections { freeSlots throws(PortError) in
            do throws(SystemError) {
                return PortTransport(slots: try SharedSlots(free: freeSlots), epollFD: epollFD)
            } catch {
                throw PortError(error, "preparing \(name) for other processes")
            }
        }
        return connections as! PortTransport  // only HarborTransport makes one
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
        let (socket, slots, vouch) = try sendRightDescriptors()
        return ExportedRight(kind: .send, identity: identity, descriptors: [socket, slots], vouch: vouch)
    }

    /// The two descriptors a send right to this port travels as: a
    /// connection to it, then its slot counter. A proxy's own; for a port
    /// received here, the connection it shares with every send right it
    /// exports (made on the first).
    ///
    /// With them, `vouch`: this process's word on the slot counter, if it
    /// vouches at all (a name server) and knows the file: a proxy's counter
    /// as it arrived here; nil for a port received here. (One read of the
    /// route for all three: a look-up's answer reads them on every reply.)
    func sendRightDescriptors() throws(PortError)
        -> (socket: SharedDescriptor, slots: SharedDescriptor, vouch: SlotCounterVouch?) {
        if let route = remoteRoute, let slots = route.slots {
            let vouch = SlotCounterVouch.isVouching ? slots.file.flatMap(SlotCounterVouch.init) : nil
            return (route.socket, slots.descriptor, vouch)
        }
        let transport = try ensureTransport()
        if let shared = sharedExport { return (shared, transport.slots.descriptor, nil) }
        do {
            let socket = try transport.makeConnection(.send)
            sendRightMade()
            // Kept open here, so the connection counts as one send right for as
            // long as the port shares it.
            offerSharedExport(socket)
            return (socket, transport.slots.descriptor, nil)
        } catch {
            throw PortError(error, "exporting a send right to \(name)")
        }
    }

    private func exportSendOnce() throws(PortError) -> ExportedRight {
        if let route = remoteRoute {
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
                sendOnceWithdrawn()
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
        let taken = moveOut(through: route)
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
        guard moveBack(from: route, to: transport, taken) else { return }
        for (kind, socket) in connections { _ = try? transport.adopt(socket, kind: kind) }
        _ = try? transport.adopt(forwarder, kind: .send)
        // A no-senders request still stands: its connections are watched again.
        if wantsNoSenders { transport.watchHangUps(for: self) }
        // Remote senders that waited for a slot were woken by the shut-down
        // and register again; wake any that registered meanwhile.
        transport.slotFreed(port: self)
    }

    // MARK: Deaths in other processes

    /// A dead-name request on a proxy: the target port watches the
    /// connection for hang-up, so the notification comes without a thread.
    func requestRemoteDeadName(_ target: SendOnceToken, route: RemoteRoute) {
        if route.hasHungUp { remoteDied() }
        guard recordDeadNameRequest(target) else { return }
        let watcher = target.port
        if !watcher.isReceivingHere {
            // The notification port is in another process: nobody here
            // receives on it, so a watching thread hears the hang-up.
            guard let token = RemoteDeathWatch.shared.add(self, socket: route.socket.rawValue) else { return }
            keepDeathWatch(token)
            if route.hasHungUp { remoteDied() }
            return
        }
        guard let transport = try? watcher.ensureTransport(),
              let token = try? transport.addWatch(on: route, for: self) else { return }
        keepWatcher(ProxyWatch(transport: transport, token: token))
        // It may have died between the first look and the watch.
        if route.hasHungUp { remoteDied() }
    }
}
