// harbor-adversary — P12: a client that stops reading what the victim sends it.
import Glibc
import HarborPeerCommands

enum StopReading {
    /// `stop-reading`: `--count` requests whose reply rights all share one
    /// socket the adversary never reads (harbord: 2,000 listings; a
    /// service: 200 echoes of 60 KiB), then holds on with it full.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        let own = OwnPort()
        let isService = target.kind == .service
        let body = isService ? [UInt8](repeating: 0x5A, count: 60 * 1024) : []
        var sent = 0
        for _ in 0..<(options.count ?? (isService ? 200 : 2000)) {
            var packet = Packet(flags: Wire.Flag.counted, id: isService ? PeerCommand.echo : Protocol.Bootstrap.list,
                                body: body)
            let descriptors = Target.assemble(&packet, rights: [], reply: .sendOnce(Identity.fresh(), socket: own.sending))
            if target.send(packet, descriptors: descriptors, wait: .seconds(2)) == .sent { sent += 1 }
        }
        report.set("sent", sent)
        options.holdOn()
        own.closeAll()
    }
}
