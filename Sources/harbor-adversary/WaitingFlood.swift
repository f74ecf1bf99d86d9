// harbor-adversary — P12: filling a name's waiting room. Messages sent to a
// declared name before its service checks in wait in harbord, charged to
// their sender's uid, at most 128 of a name's 1,024 from one uid
// (Docs/harbord.md, "Waiting messages").
import Glibc

enum WaitingFlood {
    /// `waiting-flood` (harbord): looks `--name` up (a name waiting for its
    /// service) and sends it `--count` (1,024) messages without reply
    /// rights, bodies "waiting from uid U #i"; reports how many it sent.
    /// Those over its share are dropped in harbord, which only its log shows.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord else { Report.fail("waiting-flood needs harbord") }
        guard let name = target.lookUp(options.name) else { Report.fail("cannot look up \(options.name)") }
        var sent = 0
        for index in 0..<(options.count ?? 1024) {
            let packet = Packet(flags: Wire.Flag.counted, id: 7, body: Array("waiting from uid \(getuid()) #\(index)".utf8))
            guard name.send(packet, wait: .seconds(5)) == .sent else { break }
            sent += 1
        }
        report.set("sent", sent)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        withExtendedLifetime(name) {}
    }
}
