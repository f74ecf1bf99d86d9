// Harbor — one name the server knows: who sees it, who may claim it, where its port is.
import Glibc
import HarborPorts

/// Where a name is kept: a uid's own namespace or the shared one.
struct NameKey: Hashable {
    var scope: BootstrapEntry.Scope
    var name: String
}

/// One name and its port. Confined to the server loop's thread.
final class NameEntry {
    /// How the name came to be, which decides what its holder's death does.
    enum Origin {
        /// From the policy file: when the holder dies the server makes a new
        /// receive right and messages wait for the next check-in.
        case declared
        /// Checked in without a declaration: removed when the holder dies.
        case checkedIn
        /// A send right a process registered: removed when its port dies.
        case registered
    }

    let key: NameKey
    let origin: Origin
    /// The uid that may check it in.
    let owner: uid_t
    let unit: String?
    /// The receive right while no service holds it (state `waiting`).
    var held: ReceiveRight?
    /// A send right to the port; look-ups hand out copies.
    var send: SendRight
    /// The process that checked it in or registered it.
    var pid: pid_t?
    /// Whether a look-up already asked systemd to start `unit`.
    var unitRequested = false

    /// A name whose receive right the server holds until its service checks in.
    init(key: NameKey, origin: Origin, owner: uid_t, unit: String?) {
        self.key = key
        self.origin = origin
        self.owner = owner
        self.unit = unit
        let port = ReceiveRight()
        send = port.makeSendRight()
        held = .some(port)
    }

    /// A registered name: a send right a process published.
    init(key: NameKey, registering right: SendRight, owner: uid_t, pid: pid_t) {
        self.key = key
        origin = .registered
        self.owner = owner
        unit = nil
        send = right
        self.pid = pid
    }

    var state: BootstrapEntry.State {
        if held != nil { return .waiting }
        return origin == .registered ? .registered : .active
    }

    /// The port went back to the server: a fresh one waits for the next check-in.
    func recreate() {
        let port = ReceiveRight()
        send = port.makeSendRight()
        held = .some(port)
        pid = nil
        unitRequested = false
    }

    var listing: BootstrapEntry {
        BootstrapEntry(name: key.name, scope: key.scope, state: state, unit: unit, pid: pid)
    }
}
