// harbor-adversary — P11: harbord as a confused deputy. Requests whose
// reply right leads to another process's port would make harbord speak
// into that port in its own name (Docs/Bootstrap.md, "Requests").
import Glibc

enum DeputyReply {
    /// `deputy-reply` (harbord): looks `--name` up (a service of another
    /// uid), then sends harbord look-ups and listings whose reply right is
    /// the service's connection: as a send-once right (its socket alone)
    /// and as a copy of the send right (socket and slot counter). Counts
    /// what came back to the adversary (nothing should: the requests are
    /// dropped, and the reply right leads elsewhere anyway).
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord else { Report.fail("deputy-reply needs harbord") }
        guard let service = target.lookUp(options.name) else { Report.fail("cannot look up \(options.name)") }
        let requests: [(Int32, [UInt8])] = [
            (Protocol.Bootstrap.lookUp, Array(options.name.utf8)), (Protocol.Bootstrap.list, []),
        ]
        let replies: [OutRight] = [
            .sendOnce(service.identity, socket: service.socket),
            .send(service.identity, socket: service.socket, slots: service.slots),
            // Another identity on the same socket: the claim is nothing, the socket decides.
            .sendOnce(Identity.fresh(), socket: service.socket),
        ]
        var sent = 0
        for _ in 0..<max(1, options.count ?? 1) {
            for (id, body) in requests {
                for reply in replies {
                    var packet = Packet(flags: Wire.Flag.counted, id: id, body: body)
                    let descriptors = Target.assemble(&packet, rights: [], reply: reply)
                    if target.send(packet, descriptors: descriptors) == .sent { sent += 1 }
                }
            }
        }
        report.set("sent", sent)
        // Let harbord read them all before the service is measured.
        usleep(500_000)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        withExtendedLifetime(service) {}
    }
}
