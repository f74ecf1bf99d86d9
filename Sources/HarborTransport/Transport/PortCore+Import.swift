// Harbor — rights arriving from another process: what their descriptors
// prove decides which port they stand for (P11, Docs/Security.md).
import HarborSystem
import HarborPorts

extension PortCore {
    // MARK: Importing rights
    //
    // Bytes confer nothing (P11): an identity in a packet only says which
    // port the sender means. Every import checks what the descriptors prove
    // before it finds, let alone changes, a port this process knows
    // (`PortRegistry`); a right that proves nothing about a known port
    // stands for a port of its own, and a receive right that claims a known
    // port without proof is refused (`forgedRight`) with the port untouched.

    /// `vouched`: a trusted name server's word on the slot counter's file
    /// (``SlotCounterVouch``), taken instead of `fstat`, and on the
    /// connection being a packet socket, taken instead of `SO_TYPE`.
    static func importSendRight(
        _ identity: PortIdentity, socket: SharedDescriptor, slots: SharedDescriptor,
        vouched: SlotCounterVouch? = nil
    ) throws(WireRejection) -> SendRightToken {
        let slotsFile: FileKey
        let known: (port: PortCore?, isForged: Bool)
        // Hashed once, for the look-up and the registration.
        let key = PortRegistry.Key(identity)
        do {
            slotsFile = try vouched?.file ?? FileKey(of: slots.rawValue)
            // The connection's maker is asked (and fails for anything but
            // a socket) only if a port here holds the same counter.
            known = try PortRegistry.lookUp(key, slots: slotsFile) { () throws(SystemError) -> Int32 in
                try SeqPacketSocket.creator(socket.rawValue).pid
            }
        } catch {
            throw WireRejection(.badDescriptor, "send right: \(error)")
        }
        if let existing = known.port {
            // Already known here, proven by the slot counter it carries: the
            // new descriptors are redundant (never sent through, so their
            // socket's type does not matter); closing them tells the
            // receiver one connection fewer.
            return SendRightToken(port: existing)
        }
        guard vouched != nil || SeqPacketSocket.isSeqPacket(socket.rawValue) else {
            throw WireRejection(.badDescriptor, "send right is not a socket")
        }
        // Every right to a port carries that port's one slot counter: a
        // right naming a port known here with another counter is forged.
        if known.isForged {
            throw WireRejection(.forgedRight, "a send right naming a known port without its slot counter")
        }
        let counter: SharedSlots
        // A right to a port this process let go of lately finds its counter still mapped (SpareSlotMappings).
        do { counter = try SharedSlots(adopting: slots, file: slotsFile) } catch {
            throw WireRejection(.badDescriptor, "slot counter: \(error)")
        }
        let proxy = PortCore(identity: identity, name: PortName.next(),
                             location: .proxy(RemoteRoute(socket: socket, slots: counter)), registryKey: key)
        PortRegistry.register(proxy, key: key, slots: slotsFile, isProxy: true)
        return SendRightToken(port: proxy)
    }

    static func importSendOnceRight(_ identity: PortIdentity, socket: SharedDescriptor) throws(WireRejection) -> SendOnceToken {
        guard SeqPacketSocket.isSeqPacket(socket.rawValue) else {
            throw WireRejection(.badDescriptor, "send-once right is not a socket")
        }
        try checkSendOnceClaim(identity, socket: socket)
        // Always its own proxy, under a name of its own: the connection
        // closing unused is how the receiver learns the right died, even if
        // it came home.
        return SendOnceToken(port: PortCore(identity: identity, name: PortName.next(),
                                            location: .proxy(RemoteRoute(socket: socket, slots: nil))))
    }

    static func importReceiveRight(
        _ identity: PortIdentity, slots: SharedDescriptor,
        connections: [(WireFormat.ConnectionKind, SharedDescriptor)],
        requests: [(WireFormat.RequestKind, SendOnceToken)], queued: [MessageContent],
        limit: Int, sequenceNumber: UInt64, made: UInt64
    ) throws(WireRejection) -> ReceiveRightToken {
        for (_, socket) in connections where !SeqPacketSocket.isSeqPacket(socket.rawValue) {
            throw WireRejection(.badDescriptor, "a moved connection is not a socket")
        }
        let counter: SharedSlots
        do { counter = try SharedSlots(adopting: slots) } catch {
            throw WireRejection(.badDescriptor, "slot counter: \(error)")
        }
        let existing = try provenProxy(for: identity, connections: connections.map(\.1))
        // A proxy proven to stand for this port becomes the port: the send
        // rights this process holds turn local. Otherwise a new port.
        let port = existing ?? PortCore(identity: identity, name: PortName.next(), location: .local)
        let epollFD: CInt
        do { epollFD = try port.readinessDescriptor() } catch {
            throw WireRejection(.badDescriptor, "no readiness descriptor: \(error)")
        }
        let transport = PortTransport(slots: counter, epollFD: epollFD)
        let oldRoute = port.moveIn(to: transport, limit: limit, sequenceNumber: sequenceNumber, made: made)
        _ = oldRoute  // released here: one sender fewer on its connection
        for (kind, socket) in connections {
            // A process that read its senders' cgroups left the option on
            // (or a hostile one set it): stopped before the connection is
            // adopted, so this port's packets carry no pidfd unless it asks
            // too (`adopt` then turns it on again, after this).
            _ = try? SeqPacketSocket.stopSenderPidfds(socket.rawValue)
            do { try transport.adopt(socket, kind: kind) } catch { continue }
            switch kind {
            case .send: port.sendRightMade()
            case .sendOnce: port.sendOnceMade()
            }
        }
        // The moved queue's messages are admitted as any from another
        // process, charged to the uid that moved them.
        let admission = port.admit(PortArrivals(movedQueue: queued), from: transport)
        WireRejections.record(admission.refusals)
        // The requests made before the move hold here now: no-senders fires
        // when the last connection closes and no local send right is left.
        // A no-senders request also has the connections watched for
        // hang-up, so it is heard though nobody receives here.
        for (kind, target) in requests {
            switch kind {
            case .noSenders: port.requestNoSenders(target)
            case .portDestroyed: port.requestPortDestroyed(target)
            }
        }
        return ReceiveRightToken(port: port)
    }

    /// A send-once right carries one socket and nothing else: it names a
    /// port received here only if that socket is connected to one of the
    /// port's own connections. Otherwise it is forged. (One naming a port
    /// received elsewhere cannot be checked from here; it is a proxy of its
    /// own, reaching whatever its socket reaches.)
    private static func checkSendOnceClaim(_ identity: PortIdentity, socket: SharedDescriptor) throws(WireRejection) {
        let here = PortRegistry.everyPort(identity).compactMap { port in
            port.portTransport
        }
        guard !here.isEmpty, let peer = try? SeqPacketSocket.peerInode(socket.rawValue) else { return }
        if !here.contains(where: { $0.holdsConnection(inode: peer) }) {
            throw WireRejection(.forgedRight, "a send-once right naming a port received here, not connected to it")
        }
    }

    /// The proxy a moved receive right may turn into the port, or nil for a
    /// port this process has not seen. A receive right claiming a port that
    /// is received here is forged (there is one receive right, and it is
    /// here). One claiming a port this process has a proxy for must bring
    /// the other end of that proxy's connection: only the port's holder has
    /// it, whereas its slot counter is in every sender's hands. Should the
    /// kernel lack socket diagnostics, the claim cannot be checked and the
    /// right arrives as a port of its own (its senders here still reach it,
    /// through their connections).
    private static func provenProxy(
        for identity: PortIdentity, connections: [SharedDescriptor]
    ) throws(WireRejection) -> PortCore? {
        let known = PortRegistry.everyPort(identity)
        if known.isEmpty { return nil }
        if known.contains(where: \.isReceivingHere) {
            throw WireRejection(.forgedRight, "a receive right for a port received here")
        }
        let brought = Set(connections.compactMap { try? FileKey(of: $0.rawValue).inode })
        var checkable = false
        for proxy in known {
            guard let route = proxy.remoteRoute else { continue }
            guard let peer = try? SeqPacketSocket.peerInode(route.socket.rawValue) else { continue }
            checkable = true
            if brought.contains(peer) { return proxy }
        }
        guard checkable else { return nil }
        throw WireRejection(.forgedRight, "a receive right without the connection its port's senders here use")
    }
}
