// Harbor — what the name server keeps: names, the ports of waiting names, sessions, per-uid ports.
import Glibc  // types only: pid_t, uid_t
import HarborPorts

/// Where a name is kept: a uid's own namespace or the shared one.
struct NameKey: Hashable {
    var scope: BootstrapEntry.Scope
    var name: String
}

/// One name. Confined to the server loop's thread.
///
/// While a service holds the name, the server keeps one send right to its
/// port (a connection and the port's slot counter: two descriptors, charged
/// to the owner's uid) and answers look-ups with copies of it. A declared
/// name waiting for its service has a port here instead (``WaitingPort``).
final class NameEntry {
    /// How the name came to be, which decides what its holder's death does.
    enum Origin {
        /// From the policy file: when the holder dies the server makes a new
        /// port and messages wait for the next check-in.
        case declared
        /// Checked in without a declaration: removed when the holder dies.
        case checkedIn
        /// A send right a process registered: removed when its session says
        /// the port died, or the session ends.
        case registered
    }

    let key: NameKey
    var origin: Origin
    /// The uid that may check it in.
    var owner: uid_t
    var unit: String?
    /// The port messages wait in while no service holds the name (declared names).
    var waiting: WaitingPort?
    /// The session of the process holding the name (checked in or registered).
    var session: PortName?
    /// The server's send right to the name's port while a service holds it:
    /// look-ups get copies of it.
    var right: SendRight? {
        didSet { answer = right.map(Self.answer(carrying:)) }
    }
    /// A look-up's answer while `right` is set (`Message(id: 0)` carrying
    /// it), made once and sent as a copy: every copy shares its box (the
    /// right, and a trailer that already names this process), and sending
    /// writes nothing into it, so an answer allocates nothing. A receiver
    /// in this process that changes its copy gets a box of its own.
    private(set) var answer: MessageContent?
    /// The process that checked it in or registered it.
    var pid: pid_t?
    /// Whether a look-up already asked systemd to start `unit`.
    var unitRequested = false
    /// For `harbor print`: look-ups answered, times taken, when last taken (Unix seconds).
    var lookUps = 0, checkIns = 0, since: Int?

    init(key: NameKey, origin: Origin, owner: uid_t, unit: String?) {
        self.key = key
        self.origin = origin
        self.owner = owner
        self.unit = unit
    }

    private static func answer(carrying right: SendRight) -> MessageContent {
        var answer = Message(id: 0)
        answer.attach(right)
        return answer.takeContent()
    }

    /// Whether it counts against its owner's name quota (declared names are the policy's).
    var isCounted: Bool { origin != .declared }

    var state: BootstrapEntry.State {
        if waiting != nil || session == nil { return .waiting }
        return origin == .registered ? .registered : .active
    }

    var listing: BootstrapEntry {
        BootstrapEntry(name: key.name, scope: key.scope, state: state, unit: unit, pid: pid)
    }
}

/// The port of a declared name no service holds. Messages sent to it are
/// taken out as they arrive (so each is charged to its sender's uid and a
/// connection that closed is let go) and kept, in order, until a service
/// checks the name in; then they go back into the port and the port moves.
final class WaitingPort {
    /// The port; taken when a service checks the name in.
    var port: ReceiveRight?
    /// The send right look-ups hand out copies of.
    let send: SendRight
    /// Watches the port once a send right to it was handed out.
    var watch: DescriptorWatch?
    /// Messages taken out, oldest first, each with the uid it is charged to.
    var pending: [PendingMessage] = []
    /// How many of `pending` each uid sent (for its share of the name's
    /// queue). Left as is when the port is handed over: it goes with it.
    var pendingByUser: [uid_t: Int] = [:]

    init() {
        let made = ReceiveRight()
        // Every look-up's right shares one connection: look-ups mint nothing.
        made.shareExportedConnection()
        send = made.makeSendRight()
        port = .some(made)
    }
}

/// A message waiting for a declared name's service.
final class PendingMessage {
    var message: Message?
    /// Whom it is charged to.
    let uid: uid_t
    /// Descriptors it may hold here (its rights and regions).
    let descriptors: Int

    init(_ message: consuming Message, uid: uid_t, descriptors: Int) {
        self.message = .some(message)
        self.uid = uid
        self.descriptors = descriptors
    }
}

/// A process's session: the server's one right to it, which identifies the
/// names the process holds (Docs/Bootstrap.md).
final class Session {
    let right: SendRight
    let uid: uid_t
    var pid: pid_t
    var names: Set<NameKey> = []

    init(right: SendRight, uid: uid_t, pid: pid_t) {
        self.right = right
        self.uid = uid
        self.pid = pid
    }
}

/// A uid's own bootstrap port: its processes' connections, its requests'
/// queue. One uid cannot fill another's queue or hold another's connections.
/// Confined to the server loop's thread, like the server, whose watch
/// handler captures it.
final class UserPort: @unchecked Sendable {
    // @unchecked: `watch` is set and read only on the server loop's thread.
    let uid: uid_t
    let port = ReceiveRight()
    var watch: DescriptorWatch?

    init(uid: uid_t) { self.uid = uid }

    /// Connections from other processes (and rights in this one) to it.
    var clients: Int { port.status.sendRights }
}
