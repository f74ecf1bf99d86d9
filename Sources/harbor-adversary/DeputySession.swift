// harbor-adversary — P11: a session that is someone else's. A check-in's
// right 0 names the asker's session; one leading to another process's port
// would tie the adversary's names to that process (Docs/Bootstrap.md, "Sessions").
import Glibc

enum DeputySession {
    /// `deputy-session` (harbord): checks names in and registers them with,
    /// as right 0, the send right to `--name` (a service of another uid,
    /// looked up), and then harbord's own bootstrap right; right 1 is a port
    /// of the adversary's. Reports each answer's code (`codes`) and how
    /// many were accepted.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord else { Report.fail("deputy-session needs harbord") }
        guard let service = target.lookUp(options.name) else { Report.fail("cannot look up \(options.name)") }
        let sessions: [OutRight] = [
            .send(service.identity, socket: service.socket, slots: service.slots),
            .send(target.identity, socket: target.socket, slots: target.slots),
        ]
        var codes: [String] = []
        var accepted = 0
        for (index, session) in sessions.enumerated() {
            for (request, prefix) in [(Protocol.Bootstrap.checkIn, "in"), (Protocol.Bootstrap.register, "reg")] {
                let own = OwnPort()
                let slots = ownSlotCounter()
                let answer = target.request(id: request, body: Array("adversary.deputy.\(prefix).\(index)".utf8),
                                            rights: [session, .send(own.identity, socket: own.sending, slots: slots)])
                switch answer {
                case .reply(let reply):
                    codes.append(String(reply.id))
                    if reply.id == 0 { accepted += 1 }
                    reply.closeAll()
                case .dropped: codes.append("dropped")
                case .silent: codes.append("silent")
                }
                own.closeAll()
                close(slots)
            }
        }
        report.set("codes", codes.joined(separator: ","))
        report.set("accepted", accepted)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        withExtendedLifetime(service) {}
    }
}
