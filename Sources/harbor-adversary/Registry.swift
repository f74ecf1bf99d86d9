// harbor-adversary — P12: registry entries. Every right names a port
// identity; a receiver that remembers every identity it ever saw grows for ever.
import Glibc

/// Fresh identities by the hundred thousand.
enum Registry {
    /// `identities`: `--count` (300,000) fresh identities on send-once
    /// rights, 64 to a message, all on one socket of the adversary's.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        let total = options.count ?? 300_000
        let own = OwnPort()
        var sent = 0, messages = 0
        while sent < total {
            let batch = min(64, total - sent)
            var packet = Packet(flags: Wire.Flag.counted, id: Protocol.unknown)
            packet.entries = (0..<batch).map { Entry.sendOnce(Identity.fresh(), first: $0) }
            packet.declaredDescriptors = batch
            guard target.send(packet, descriptors: Array(repeating: own.sending, count: batch), wait: .seconds(10)) == .sent
            else { break }
            sent += batch
            messages += 1
        }
        own.closeAll()
        report.set("identities", sent)
        report.set("messages", messages)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }
}
