// harbor-adversary — P12: a table full of one uid's names, and listings
// asked for as fast as harbord answers. A listing that cost harbord every
// uid's names would starve everyone else (Docs/harbord.md, "Listings").
import Glibc

enum ListFlood {
    /// Requests in flight at once.
    static let window = 64

    /// `list-flood` (harbord): registers `--count` (16,384) names for one
    /// port of its own, 64 requests in flight, then floods list requests
    /// (16 in flight, each with its own reply socket) for `--hold` (5)
    /// seconds. Reports the names registered and the listings answered.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        guard target.kind == .harbord else { Report.fail("list-flood needs harbord") }
        let session = OwnPort(), published = OwnPort()
        let sessionSlots = ownSlotCounter(), publishedSlots = ownSlotCounter()
        let rights: [OutRight] = [.send(session.identity, socket: session.sending, slots: sessionSlots),
                                  .send(published.identity, socket: published.sending, slots: publishedSlots)]
        let replies = OwnPort()
        let total = options.count ?? 16_384
        var registered = 0, refused = 0, asked = 0
        let start = ContinuousClock.now
        while asked < total {
            let batch = min(window, total - asked)
            var sent = 0
            for index in asked..<(asked + batch) {
                var packet = Packet(flags: Wire.Flag.counted, id: Protocol.Bootstrap.register,
                                    body: Array("adversary.list.\(index)".utf8))
                let descriptors = Target.assemble(&packet, rights: rights,
                                                  reply: .sendOnce(Identity.fresh(), socket: replies.sending))
                if target.send(packet, descriptors: descriptors, wait: .seconds(10)) == .sent { sent += 1 }
            }
            for _ in 0..<sent {
                guard let (bytes, descriptors) = RawIO.receive(replies.receiving, timeout: .seconds(10)) else { break }
                for descriptor in descriptors { close(descriptor) }
                if let reply = Inbound(bytes, descriptors: []), reply.id == 0 { registered += 1 } else { refused += 1 }
            }
            asked += batch
            if sent < batch || refused > 0 { break }
        }
        report.set("registered", registered)
        report.set("refused", refused)
        report.set("registerMs", Int((ContinuousClock.now - start) / .milliseconds(1)))
        report.set("listings", flood(target, for: options.hold > 0 ? options.hold : 5))
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
        for port in [session, published, replies] { port.closeAll() }
        close(sessionSlots)
        close(publishedSlots)
    }

    /// List requests, 16 in flight, for `seconds`; the number answered.
    private static func flood(_ target: Target, for seconds: Double) -> Int {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var answered = 0
        while ContinuousClock.now < end {
            var ports: [OwnPort] = []
            for _ in 0..<16 {
                let port = OwnPort()
                var packet = Packet(flags: Wire.Flag.counted, id: Protocol.Bootstrap.list)
                let descriptors = Target.assemble(&packet, rights: [], reply: .sendOnce(port.identity, socket: port.sending))
                if target.send(packet, descriptors: descriptors, wait: .seconds(5)) == .sent { ports.append(port) } else { port.closeAll() }
            }
            for port in ports {
                if let reply = port.answer(timeout: .seconds(10)).inbound {
                    answered += 1
                    reply.closeAll()
                }
                close(port.receiving)
            }
        }
        return answered
    }
}
