// harbor-adversary — P12: holding what the victim must keep for us: its
// connections and its names.
import Glibc
import HarborPeerCommands

enum Hoarding {
    /// `hoard-rights`: `--count` (1,000) connections to the victim's port
    /// (harbord: bootstrap rights, one connect each; a service: grants),
    /// every descriptor kept; holds on.
    static func rights(_ target: Target, _ options: Options, _ report: Report) {
        report.set("descriptorLimit", RawIO.raiseDescriptorLimit())
        var held: [Target] = []
        var failed = 0
        for _ in 0..<(options.count ?? 1000) {
            if let more = target.another(socketPath: options.socketPath, grantID: PeerCommand.grant) {
                held.append(more)
            } else {
                failed += 1
                if failed > 50 { break }
            }
        }
        report.set("held", held.count)
        report.set("failed", failed)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        withExtendedLifetime(held) {}
    }

    /// `hoard-names` (harbord): checks in `--count` (600) names and
    /// registers as many more, keeping every right and socket; holds on.
    static func names(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord else { Report.fail("hoard-names needs harbord") }
        report.set("descriptorLimit", RawIO.raiseDescriptorLimit())
        let count = options.count ?? 600
        var kept: [CInt] = []
        var checkedIn = 0, registered = 0, refused = 0
        // Each request carries send rights to two fresh ports of the
        // adversary's: the name's session (right 0) and the name's port,
        // which harbord keeps (right 1), so each name costs harbord what it can.
        for (request, prefix) in [(Protocol.Bootstrap.checkIn, "in"), (Protocol.Bootstrap.register, "reg")] {
            for index in 0..<count {
                let own = OwnPort()
                let slots = ownSlotCounter()
                let named = OwnPort()
                let namedSlots = ownSlotCounter()
                let answer = target.request(id: request, body: Array("adversary.\(prefix).\(index)".utf8),
                                            rights: [.send(own.identity, socket: own.sending, slots: slots),
                                                     .send(named.identity, socket: named.sending, slots: namedSlots)])
                if let reply = answer.inbound, reply.id == 0 {
                    if request == Protocol.Bootstrap.checkIn { checkedIn += 1 } else { registered += 1 }
                    kept += [own.receiving, own.sending, slots, named.receiving, named.sending, namedSlots] + reply.descriptors
                } else {
                    refused += 1
                    own.closeAll()
                    named.closeAll()
                    close(slots)
                    close(namedSlots)
                    answer.inbound?.closeAll()
                }
            }
        }
        report.set("checkedIn", checkedIn)
        report.set("registered", registered)
        report.set("refused", refused)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        for descriptor in kept { close(descriptor) }
    }
}
