// harbor-adversary — reaching the victim: a service's port (a send right the
// test hands over on the inherited descriptor) or harbord's bootstrap port
// (connect to its socket and read the welcome packet, as every client does).
import CHarborLinux
import Glibc

/// A right the adversary puts in a packet: its kind, the identity it
/// claims, and the descriptors it really sends.
struct OutRight {
    var kind: Wire.EntryKind
    var identity: Identity
    var descriptors: [CInt]
    /// A send right's slot counter file as the entry vouches for it (flag
    /// `vouched`): what only a trusted name server's word may stand for.
    var vouch: (device: UInt32, inode: UInt32)?

    static func send(_ identity: Identity, socket: CInt, slots: CInt,
                     vouch: (device: UInt32, inode: UInt32)? = nil) -> OutRight {
        OutRight(kind: .send, identity: identity, descriptors: [socket, slots], vouch: vouch)
    }

    static func sendOnce(_ identity: Identity, socket: CInt) -> OutRight {
        OutRight(kind: .sendOnce, identity: identity, descriptors: [socket])
    }
}

/// What became of a request's reply right.
enum Answer {
    case reply(Inbound)
    /// The reply right was dropped unused (its socket closed): the request
    /// was refused before anyone could answer it.
    case dropped
    /// No answer within the timeout.
    case silent

    var inbound: Inbound? {
        if case .reply(let inbound) = self { return inbound }
        return nil
    }
}

/// A socket pair standing for a port of the adversary's own: the victim
/// gets `sending` inside a right; the adversary reads `receiving`.
struct OwnPort {
    let receiving: CInt
    let sending: CInt
    let identity: Identity

    init() {
        (receiving, sending) = RawIO.socketPair()
        identity = Identity.fresh()
    }

    /// Waits for one packet (closing this side's copy of `sending` first, so
    /// that the victim dropping the right shows as EOF).
    func answer(timeout: Duration, keepSending: Bool = false) -> Answer {
        if !keepSending { close(sending) }
        var probe = pollfd(fd: receiving, events: Int16(POLLIN), revents: 0)
        guard poll(&probe, 1, CInt(timeout / .milliseconds(1))) > 0 else { return .silent }
        guard let (bytes, descriptors) = RawIO.receive(receiving, timeout: .zero),
              let inbound = Inbound(bytes, descriptors: descriptors) else { return .dropped }
        return .reply(inbound)
    }

    func closeAll() {
        close(receiving)
        close(sending)
    }
}

/// A connection to the victim's port, with what came with it.
final class Target {
    enum Kind: String { case service, harbord }

    let kind: Kind
    let socket: CInt
    let slots: CInt
    /// The victim port's identity, as its right said.
    let identity: Identity
    let counter: SlotCounter

    init(kind: Kind, socket: CInt, slots: CInt, identity: Identity) {
        self.kind = kind
        self.socket = socket
        self.slots = slots
        self.identity = identity
        counter = SlotCounter(slots)
    }

    deinit {
        close(socket)
        close(slots)
    }

    /// Connects to harbord at `path` and takes the bootstrap right from the
    /// welcome packet. Nil if harbord does not answer.
    static func harbord(_ path: String) -> Target? {
        guard let right = welcome(path) else { return nil }
        return Target(kind: .harbord, socket: right.descriptors[0], slots: right.descriptors[1], identity: right.identity)
    }

    /// One connection to harbord's socket: the welcome's send right.
    static func welcome(_ path: String, timeout: Duration = .seconds(5)) -> Inbound.Right? {
        let fd = Glibc.socket(AF_UNIX, CInt(charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0, let (packet, descriptors) = RawIO.receive(fd, timeout: timeout) else { return nil }
        guard let welcome = Inbound(packet, descriptors: descriptors), let right = welcome.rights.first,
              right.kind == Wire.EntryKind.send.rawValue, right.descriptors.count == 2 else {
            for descriptor in descriptors { close(descriptor) }
            return nil
        }
        return right
    }

    /// The service the test named: its send right arrives as right 0 of
    /// the first message on the inherited descriptor. That connection is
    /// the test's own, so the adversary asks the service for one of its
    /// own (`grant`) and lets the shared one go.
    static func service(grantID: Int32) -> Target? {
        guard let value = getenv("HARBOR_INITIAL_FD"), let fd = CInt(String(cString: value)) else { return nil }
        defer { close(fd) }
        guard let (packet, descriptors) = RawIO.receive(fd, timeout: .seconds(30)),
              let first = Inbound(packet, descriptors: descriptors), let right = first.rights.first,
              right.descriptors.count == 2 else { return nil }
        let shared = Target(kind: .service, socket: right.descriptors[0], slots: right.descriptors[1],
                            identity: right.identity)
        guard let granted = shared.request(id: grantID).inbound, let own = granted.rights.first,
              own.descriptors.count == 2 else { return nil }
        return Target(kind: .service, socket: own.descriptors[0], slots: own.descriptors[1], identity: own.identity)
    }

    /// Another connection to the same port (harbord: a new client; a
    /// service: another grant).
    func another(socketPath: String?, grantID: Int32) -> Target? {
        if kind == .harbord, let socketPath { return Self.harbord(socketPath) }
        guard let granted = request(id: grantID).inbound, let own = granted.rights.first,
              own.descriptors.count == 2 else { return nil }
        return Target(kind: kind, socket: own.descriptors[0], slots: own.descriptors[1], identity: own.identity)
    }

    /// Encodes `rights` (and `reply`, last) into `packet`, filling in
    /// entries, descriptor indices and the declared count; returns the
    /// descriptors to send.
    static func assemble(_ packet: inout Packet, rights: [OutRight], reply: OutRight?) -> [CInt] {
        var descriptors: [CInt] = []
        for right in rights + (reply.map { [$0] } ?? []) {
            var entry = Entry(kind: right.kind.rawValue, descriptorCount: UInt8(right.descriptors.count),
                              first: UInt32(descriptors.count), identity: right.identity)
            if let vouch = right.vouch {
                entry.flags = Wire.EntryFlag.vouched
                entry.nestedOffset = vouch.device
                entry.nestedLength = vouch.inode
            }
            packet.entries.append(entry)
            descriptors += right.descriptors
        }
        if reply != nil { packet.flags |= Wire.Flag.hasReply }
        packet.declaredDescriptors = descriptors.count
        return descriptors
    }

    /// Sends `packet` with `descriptors`, taking a slot first when it counts.
    @discardableResult
    func send(_ packet: Packet, descriptors: [CInt] = [], wait: Duration = .seconds(5)) -> SendOutcome {
        if packet.flags & Wire.Flag.counted != 0 { _ = counter.acquire(patience: wait, socket: socket) }
        return RawIO.send(socket, [packet.encoded], descriptors: descriptors, wait: wait)
    }

    /// An ordinary request: id, body, rights, and a reply right to a port of
    /// the adversary's own; waits for the answer.
    func request(id: Int32, body: [UInt8] = [], rights: [OutRight] = [], timeout: Duration = .seconds(5)) -> Answer {
        let replies = OwnPort()
        defer { close(replies.receiving) }
        var packet = Packet(flags: Wire.Flag.counted, id: id, body: body)
        let descriptors = Self.assemble(&packet, rights: rights, reply: .sendOnce(replies.identity, socket: replies.sending))
        guard send(packet, descriptors: descriptors) == .sent else {
            close(replies.sending)
            return .silent
        }
        return replies.answer(timeout: timeout)
    }
}
