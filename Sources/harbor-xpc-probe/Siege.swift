// harbor-xpc-probe — Siege: a hostile client of another uid (main.swift).
import Glibc
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem
import HarborXPC

/// `siege NAME`: what a hostile client does to a listener (test X14). It
/// opens four sessions by hand and abuses them: malformed and oversized
/// requests (each must get a typed failure), requests whose reply right it
/// kills at once, requests whose replies it never reads, messages of other
/// ids carrying rights; then floods session requests past its share; then
/// prints `sieging …` and keeps sending requests it never reads until it is
/// killed, mid-call.
enum Siege {
    // The wire ids (Docs/XPC.md, "On the wire"), as a hostile peer writes them.
    static let connect: Int32 = 0x5850_4301
    static let accepted: Int32 = 0x5850_4302
    static let request: Int32 = 0x5850_4305
    static let failure: Int32 = 0x5850_4307

    static func run(_ name: String) -> Never {
        guard let bootstrap = try? BootstrapClient(), let service = try? bootstrap.lookUp(name) else {
            line("error look-up")
            exit(1)
        }
        var raw: [SendRight] = []
        for _ in 0..<4 { if let session = open(service) { raw.append(session) } }
        guard raw.count == 4 else {
            line("error \(raw.count) raw sessions")
            exit(1)
        }
        // Malformed and oversized bodies: a typed failure each, or refused at the send.
        var typed = 0, refused = 0, other = 0
        var random = SystemRandomNumberGenerator()
        for size in [0, 1, 7, 64, 4096, 65_536, 300_000, 4_000_000] {
            let body = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            if let id = answer(raw[0], Message(id: request, body: body)) {
                if id == failure { typed += 1 } else { other += 1 }
            } else {
                refused += 1
            }
        }
        // Other ids, with rights and a reply right: dropped or refused, never served.
        let own = ReceiveRight()
        for id in [connect, accepted, 0, -1, 0x5850_43FF] {
            var message = Message(id: id, body: [1, 2, 3])
            message.attach(own.makeSendRight())
            message.attach(own.makeSendOnceRight())
            _ = answer(raw[0], message)
        }
        // Reply rights killed at once; replies never read.
        // (A send that waits past its timeout, the session's queue full, ends its loop.)
        let sink = ReceiveRight()
        for n in 0..<300 {
            guard var ask = try? MessageEncoder().encode(Ask(op: "echo", n: n), id: request) else { exit(1) }
            let killed = ReceiveRight()
            ask.setReplyRight(killed.makeSendOnceRight())
            _ = consume killed
            guard (try? raw[1].send(ask, timeout: .seconds(2))) != nil else { break }
        }
        for n in 0..<300 {
            guard var mute = try? MessageEncoder().encode(Ask(op: "echo", n: n), id: request) else { exit(1) }
            mute.setReplyRight(sink.makeSendOnceRight())
            guard (try? raw[2].send(mute, timeout: .seconds(2))) != nil else { break }
        }
        // Sessions past the share.
        var flood: [XPCSession] = []
        var rejected = 0
        for _ in 0..<100 {
            do {
                flood.append(try XPCSession(machService: name, bootstrap: bootstrap))
            } catch {
                if error.code == .sessionRejected { rejected += 1 }
            }
        }
        line("sieging typed \(typed) refused \(refused) other \(other) sessions \(flood.count + raw.count) rejected \(rejected)")
        // Calls it never reads, until it is killed.
        var n = 0
        while true {
            n += 1
            guard var ask = try? MessageEncoder().encode(Ask(op: "echo", n: n), id: request) else { exit(1) }
            ask.setReplyRight(sink.makeSendOnceRight())
            try? raw[3].send(ask, timeout: .seconds(1))
            withExtendedLifetime(flood) {}
        }
    }

    /// A session opened by hand: a connect, its acceptance's right.
    private static func open(_ service: SendRight) -> SendRight? {
        guard var reply = try? service.sendAndReceive(Message(id: connect), timeout: .seconds(10)),
              reply.id == accepted, reply.notification == nil else { return nil }
        return try? reply.takeSendRight(at: 0)
    }

    /// The id of the answer to `message`, -1 for a dropped reply right, nil if it could not be sent or none came.
    private static func answer(_ session: SendRight, _ message: consuming Message) -> Int32? {
        let port = ReceiveRight()
        message.setReplyRight(port.makeSendOnceRight())
        guard (try? session.send(message, timeout: .seconds(10))) != nil,
              let reply = try? port.receive(timeout: .seconds(10)) else { return nil }
        return reply.notification == nil ? reply.id : -1
    }
}
