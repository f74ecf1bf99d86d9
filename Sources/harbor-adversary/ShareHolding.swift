// harbor-adversary — P12: one of many uids, each taking all its share of
// harbord's descriptors (Docs/harbord.md, "Limits": 18 shares, at most 16
// for all unprivileged uids, so root always finds two).
import Glibc

enum ShareHolding {
    /// `hold-share` (harbord): checks up to 8 names in, each on a session
    /// of its own, then connects until harbord refuses 20 times in a row
    /// (or `--count`, 2,000, connections); keeps everything, holds on.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord, let path = options.socketPath else { Report.fail("hold-share needs harbord") }
        report.set("descriptorLimit", RawIO.raiseDescriptorLimit())
        var kept: [CInt] = []
        var checkedIn = 0
        var codes: Set<Int32> = []
        for index in 0..<8 {
            let session = OwnPort(), port = OwnPort()
            let sessionSlots = ownSlotCounter(), portSlots = ownSlotCounter()
            let answer = target.request(id: Protocol.Bootstrap.checkIn, body: Array("adversary.share.\(index)".utf8),
                                        rights: [.send(session.identity, socket: session.sending, slots: sessionSlots),
                                                 .send(port.identity, socket: port.sending, slots: portSlots)])
            kept += [session.receiving, session.sending, port.receiving, port.sending, sessionSlots, portSlots]
            guard let reply = answer.inbound else { break }
            kept += reply.descriptors
            codes.insert(reply.id)
            if reply.id != 0 { break }
            checkedIn += 1
        }
        var held: [Target] = []
        var refusedInARow = 0
        while held.count < (options.count ?? 2000), refusedInARow < 20 {
            if let more = Target.harbord(path) {
                held.append(more)
                refusedInARow = 0
            } else {
                refusedInARow += 1
            }
        }
        report.set("connections", held.count)
        report.set("checkedIn", checkedIn)
        report.set("codes", codes.sorted().map(String.init).joined(separator: ","))
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        for descriptor in kept { close(descriptor) }
        withExtendedLifetime(held) {}
    }
}
