// harbor-adversary — a right to a named service, the way every client gets
// one: a look-up at harbord.
import Glibc

extension Target {
    /// Looks `name` up at harbord (this target) and wraps the send right
    /// the answer carries as a target of its own; nil if refused.
    func lookUp(_ name: String, timeout: Duration = .seconds(5)) -> Target? {
        guard let reply = request(id: Protocol.Bootstrap.lookUp, body: Array(name.utf8), timeout: timeout).inbound
        else { return nil }
        guard reply.id == 0, let right = reply.rights.first, right.descriptors.count == 2 else {
            reply.closeAll()
            return nil
        }
        return Target(kind: .service, socket: right.descriptors[0], slots: right.descriptors[1], identity: right.identity)
    }
}
