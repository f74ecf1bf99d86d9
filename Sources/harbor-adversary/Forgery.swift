// harbor-adversary — P11: rights made up from identities the adversary has
// seen (the victim port's, from its own send right or harbord's welcome) or
// guessed (port numbers are sequential per process), and queued requests
// that claim another sender.
import Glibc
import HarborPeerCommands

enum Forgery {
    /// Identities near `known`: the same origin, numbers around it (the
    /// victim's other ports were made just before or after it).
    static func guesses(around known: Identity, count: Int) -> [Identity] {
        let low = known.number > 8 ? known.number - 8 : 1
        return (0..<UInt64(count)).map { Identity(origin: known.origin, number: low + $0) }.filter { $0 != known }
    }

    /// A queued request inside a transfer record: `id`, `body`, a reply right
    /// whose socket is descriptor `replyIndex` of the outer packet, claiming
    /// pid 1, uid 0, gid 0 sent it.
    static func queuedAsRoot(id: Int32, body: [UInt8], replyIdentity: Identity, replyIndex: Int)
        -> (pid: Int32, uid: UInt32, gid: UInt32, packet: [UInt8]) {
        var packet = Packet(flags: Wire.Flag.counted | Wire.Flag.hasReply, id: id, body: body)
        packet.entries = [.sendOnce(replyIdentity, first: replyIndex)]
        packet.declaredDescriptors = 0  // nested: indices refer to the outer packet
        return (1, 0, 0, packet.encoded)
    }

    /// A message carrying a receive right that claims `identity`, with its
    /// slot counter `slots`, one connection of the adversary's and `queued`
    /// requests (whose reply sockets are `replySockets`), queue limit 0.
    static func receiveRight(claiming identity: Identity, slots: CInt, connection: CInt,
                             queued: [(pid: Int32, uid: UInt32, gid: UInt32, packet: [UInt8])],
                             replySockets: [CInt], id: Int32 = Protocol.unknown) -> (Packet, [CInt]) {
        let transfer = Transfer(queueLimit: 0, connections: [(1, 1)], queued: queued).encoded
        var entry = Entry(kind: Wire.EntryKind.receive.rawValue, descriptorCount: 1, first: 0, identity: identity)
        entry.nestedLength = UInt32(transfer.count)
        let descriptors = [slots, connection] + replySockets
        let packet = Packet(flags: Wire.Flag.counted | Wire.Flag.transfers, id: id, entries: [entry],
                            nested: transfer, declaredDescriptors: descriptors.count)
        return (packet, descriptors)
    }

    /// `forge-receive`: a receive right claiming the victim port's identity
    /// (then guessed neighbours), its queue holding requests "from uid 0":
    /// harbord's listing and a look-up of root's name; a service's `whoami`.
    static func forgeReceive(_ target: Target, _ options: Options, _ report: Report) {
        var asRoot = 0
        var answered = 0
        var claims = [target.identity] + guesses(around: target.identity, count: options.guesses)
        if options.guesses == 0 { claims = [target.identity] }
        for identity in claims {
            let junk = OwnPort()
            let first = OwnPort(), second = OwnPort()
            let requests: [(Int32, [UInt8])] = target.kind == .harbord
                ? [(Protocol.Bootstrap.list, []), (Protocol.Bootstrap.lookUp, Array(options.name.utf8))]
                : [(PeerCommand.whoami, []), (PeerCommand.echo, Array("as root".utf8))]
            let queued = [
                queuedAsRoot(id: requests[0].0, body: requests[0].1, replyIdentity: first.identity, replyIndex: 2),
                queuedAsRoot(id: requests[1].0, body: requests[1].1, replyIdentity: second.identity, replyIndex: 3),
            ]
            let (packet, descriptors) = receiveRight(claiming: identity, slots: target.slots, connection: junk.receiving,
                                                     queued: queued, replySockets: [first.sending, second.sending])
            target.send(packet, descriptors: descriptors)
            let wait: Duration = identity == target.identity ? .seconds(3) : .milliseconds(300)
            for (port, index) in [(first, 0), (second, 1)] {
                if let reply = port.answer(timeout: wait).inbound {
                    answered += 1
                    if Self.answeredAsRoot(reply, request: index, target: target, options: options) { asRoot += 1 }
                    reply.closeAll()
                }
                close(port.receiving)
            }
            junk.closeAll()
        }
        report.set("claims", claims.count)
        report.set("answered", answered)
        report.set("answeredAsRoot", asRoot)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    /// Whether a reply shows the victim took the queued request as uid 0's.
    private static func answeredAsRoot(_ reply: Inbound, request: Int, target: Target, options: Options) -> Bool {
        switch (target.kind, request) {
        case (.harbord, 0): reply.id == 0 && reply.text.contains(options.name)
        case (.harbord, _): reply.id == 0 && !reply.rights.isEmpty
        case (.service, 0): reply.text.hasPrefix("uid=0 ")
        case (.service, _): false
        }
    }

    /// `forge-send`: send rights claiming identities the adversary never
    /// held (the victim's port, guessed neighbours) with sockets of its own.
    /// harbord: register each as a name, look it up, and see whose socket
    /// comes back. A service: ask it to `forward` the right to the
    /// adversary, and see whose socket arrives. A socket that is not the
    /// adversary's own is a stolen right: it sends "stolen" down it.
    /// With `--vouch true`, every forged right also vouches (entry flag
    /// `vouched`) that its slot counter is the victim port's own, whose
    /// file the adversary reads from the counter of its honest right to
    /// the victim: a word only a trusted name server's is taken for.
    static func forgeSend(_ target: Target, _ options: Options, _ report: Report) {
        let claims = [target.identity] + guesses(around: target.identity, count: options.guesses)
        var accepted = 0, refused = 0, stolen = 0, stolenOther = 0, forwardedToOwn = 0, lost = 0
        var vouch: (device: UInt32, inode: UInt32)?
        if options.vouch {
            guard let victimCounter = RawIO.file32(target.slots) else {
                Report.fail("the victim's slot counter file does not fit a vouch")
            }
            vouch = victimCounter
        }
        report.set("vouched", vouch == nil ? 0 : claims.count)
        for (index, identity) in claims.enumerated() {
            let junk = OwnPort()
            let junkSlots = ownSlotCounter()
            let forged = OutRight.send(identity, socket: junk.sending, slots: junkSlots, vouch: vouch)
            var received: Inbound.Right?
            switch target.kind {
            case .harbord:
                let name = Array("adversary.\(index)".utf8)
                switch registerAndLookUp(target, name: name, forged: forged, junk: junk) {
                case .refused: refused += 1
                case .lookedUp(let right):
                    accepted += 1
                    received = right
                case .forwardedToOwnSocket: accepted += 1; forwardedToOwn += 1
                case .lost: accepted += 1; lost += 1
                }
            case .service:
                let inbox = OwnPort()
                let inboxSlots = ownSlotCounter()
                var packet = Packet(flags: Wire.Flag.counted, id: PeerCommand.forward)
                let descriptors = Target.assemble(
                    &packet, rights: [forged, .send(inbox.identity, socket: inbox.sending, slots: inboxSlots)], reply: nil)
                target.send(packet, descriptors: descriptors)
                close(inboxSlots)
                let delivered = inbox.answer(timeout: .milliseconds(identity == target.identity ? 2000 : 500))
                received = delivered.inbound?.rights.first
                if received == nil { refused += 1 } else { accepted += 1 }
                close(inbox.receiving)
            }
            if let received, let socket = received.descriptors.first {
                if RawIO.inode(socket) != RawIO.inode(junk.sending) {
                    // Not the socket the adversary sent: a right to someone's port.
                    if identity == target.identity { stolen += 1 } else { stolenOther += 1 }
                    var use = Packet(id: PeerCommand.use, body: Array("stolen by \(getpid())".utf8))
                    use.declaredDescriptors = 0
                    _ = RawIO.send(socket, [use.encoded], wait: .milliseconds(100))
                }
                for descriptor in received.descriptors { close(descriptor) }
            }
            close(junkSlots)
            junk.closeAll()
        }
        report.set("claims", claims.count)
        report.set("accepted", accepted)
        report.set("refused", refused)
        // The victim port's own identity: a second way to reach a port the
        // adversary may already send to, but through a forged right.
        report.set("forgedOwnHonoured", stolen)
        report.set("stolen", stolenOther)
        report.set("forwardedToOwn", forwardedToOwn)
        report.set("lost", lost)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    /// Where a look-up of a name registered with a forged right led.
    enum LookUpOutcome {
        case refused
        /// harbord answered with a right (its own copy of what was registered).
        case lookedUp(Inbound.Right?)
        /// harbord forwarded the look-up to the registering "session", which
        /// turned out to be the adversary's own socket: the claim named nothing else.
        case forwardedToOwnSocket
        /// Neither: the look-up went to whatever port the claim named.
        case lost
    }

    /// Registers `name` with `forged` as right 0 (harbord keeps it, or treats
    /// it as the registering session), looks the name up, unregisters it.
    private static func registerAndLookUp(
        _ target: Target, name: [UInt8], forged: OutRight, junk: OwnPort
    ) -> LookUpOutcome {
        let registered = target.request(id: Protocol.Bootstrap.register, body: name, rights: [forged])
        guard let answer = registered.inbound, answer.id == 0 else {
            registered.inbound?.closeAll()
            return .refused
        }
        let replies = OwnPort()
        var packet = Packet(flags: Wire.Flag.counted, id: Protocol.Bootstrap.lookUp, body: name)
        let descriptors = Target.assemble(&packet, rights: [], reply: .sendOnce(replies.identity, socket: replies.sending))
        target.send(packet, descriptors: descriptors)
        close(replies.sending)
        var probes = [pollfd(fd: replies.receiving, events: Int16(POLLIN), revents: 0),
                      pollfd(fd: junk.receiving, events: Int16(POLLIN), revents: 0)]
        _ = poll(&probes, 2, 2000)
        var outcome = LookUpOutcome.lost
        if probes[1].revents & Int16(POLLIN) != 0, let (_, forwarded) = RawIO.receive(junk.receiving, timeout: .zero) {
            for descriptor in forwarded { close(descriptor) }
            outcome = .forwardedToOwnSocket
        } else if probes[0].revents & Int16(POLLIN) != 0,
                  let (bytes, arrived) = RawIO.receive(replies.receiving, timeout: .zero) {
            let reply = Inbound(bytes, descriptors: arrived)
            outcome = .lookedUp(reply?.rights.first)
            // The caller closes the right's descriptors; close the rest.
            let kept = Set(reply?.rights.first?.descriptors ?? [])
            for descriptor in arrived where !kept.contains(descriptor) { close(descriptor) }
        }
        close(replies.receiving)
        _ = target.request(id: Protocol.Bootstrap.unregister, body: name)
        return outcome
    }

    /// `forge-send-once`: reply rights claiming the victim port's identity
    /// and guessed neighbours, on sockets of the adversary's own. Where does
    /// the answer go? To the adversary's socket (the claim named nothing
    /// but that socket), nowhere (refused), or elsewhere (silent here: the
    /// claim reached the port it named).
    static func forgeSendOnce(_ target: Target, _ options: Options, _ report: Report) {
        let claims = [target.identity] + guesses(around: target.identity, count: options.guesses)
        var outcomes: [String: Int] = [:]
        for identity in claims {
            let junk = OwnPort()
            let id = target.kind == .harbord ? Protocol.Bootstrap.list : PeerCommand.echo
            var packet = Packet(flags: Wire.Flag.counted, id: id)
            packet.body = target.kind == .harbord ? [] : Array("forged reply".utf8)
            let descriptors = Target.assemble(&packet, rights: [], reply: .sendOnce(identity, socket: junk.sending))
            target.send(packet, descriptors: descriptors)
            let outcome: String
            switch junk.answer(timeout: .milliseconds(identity == target.identity ? 2000 : 500)) {
            case .reply(let reply):
                outcome = "answered"
                reply.closeAll()
            case .dropped: outcome = "dropped"
            case .silent: outcome = "silent"
            }
            if identity == target.identity { report.set("own", outcome) }
            outcomes[outcome, default: 0] += 1
            close(junk.receiving)
        }
        report.set("claims", claims.count)
        for outcome in ["answered", "dropped", "silent"] { report.set(outcome, outcomes[outcome] ?? 0) }
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    /// `relay-claim`: a receive right of the adversary's own (a fresh
    /// identity, honestly moved) whose queue holds messages "from pid 1,
    /// uid 0"; the service drains it and says who sent each.
    static func relayClaim(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .service else { Report.fail("relay-claim needs a service") }
        let junk = OwnPort()
        let slots = ownSlotCounter()
        var queued: [(pid: Int32, uid: UInt32, gid: UInt32, packet: [UInt8])] = []
        for index in 0..<2 {
            var message = Packet(id: 4, body: Array("claim\(index)".utf8))
            message.declaredDescriptors = 0
            queued.append((1, 0, 0, message.encoded))
        }
        let replies = OwnPort()
        var (packet, descriptors) = receiveRight(claiming: Identity.fresh(), slots: slots, connection: junk.receiving,
                                                 queued: queued, replySockets: [], id: PeerCommand.drainTrailers)
        packet.entries.append(.sendOnce(replies.identity, first: descriptors.count))
        packet.flags |= Wire.Flag.hasReply
        descriptors.append(replies.sending)
        packet.declaredDescriptors = descriptors.count
        target.send(packet, descriptors: descriptors)
        let answer = replies.answer(timeout: .seconds(5))
        close(replies.receiving)
        close(slots)
        junk.closeAll()
        // "text@senderPid@claimedPid" per queued message.
        let entries = answer.inbound?.text.split(separator: ",").map { $0.split(separator: "@").map(String.init) } ?? []
        report.set("drained", entries.count)
        report.set("shownAsClaimed", entries.filter { $0.count > 1 && $0[1] == "1" }.count)
        report.set("shownAsRelay", entries.filter { $0.count > 1 && $0[1] == String(getpid()) }.count)
        report.set("reply", answer.inbound.map { oneWord($0.text) } ?? "none")
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }
}
