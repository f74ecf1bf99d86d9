// Harbor fuzzing — the bootstrap protocol: requests as harbord decodes them,
// replies as a client decodes them, and a fake server's welcome.
//
// Per input, a fresh `BootstrapServer` with a policy the input declares
// runs on a worker loop; the input's steps are requests of any id (the
// introspection and monitor ones too), body, rights and reply right sent
// to its bootstrap port (raw, as a hostile
// client sends them, or through `BootstrapClient`), listings a hostile
// server might send, and welcome packets. Every request with a reply right
// must be answered; every descriptor must be closed at the end.
import CHarborLinux
import Glibc
import HarborBootstrap
import HarborPorts
@testable import HarborPorts
@testable import HarborTransport
import Synchronization
import HarborRunLoop
import HarborSystem

enum BootstrapTarget {
    private static let worker = LoopWorker(name: "harbor-fuzz.bootstrap")
    private static let directory: String = {
        var template = Array("/tmp/harbor-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fail("mkdtemp: \(errno)") }
        return String(cString: made)
    }()
    nonisolated(unsafe) private static var baseline: Set<CInt>?

    static let names = [
        "com.example.echo", "com.example.clock", "a", "x:y@z-1_2.3", String(repeating: "n", count: 128),
        String(repeating: "n", count: 129), "bad name", "caf\u{E9}", "", "com.example.s1",
    ]

    static func run(_ data: [UInt8]) {
        if baseline == nil {
            for seed in seeds { execute(seed) }
            baseline = DescriptorTable.open()
        }
        execute(data)
        if var known = baseline {
            DescriptorTable.expectNoneOpened(since: &known)
            baseline = known
        }
    }

    private static func execute(_ data: [UInt8]) {
        var reader = FuzzReader(data)
        var policyText = ""
        for _ in 0..<reader.choice(4) {
            let flags = reader.byte()
            let name = names[reader.choice(names.count)]
            let owner = [getuid(), 0, 1000][reader.choice(3)]
            policyText += flags & 1 == 0 ? "declare \(name) user=\(owner)" : "shared \(name) owner=\(owner)"
            policyText += flags & 2 == 0 ? "\n" : " unit=fuzz-\(flags >> 2).service\n"
        }
        let policy = (try? BootstrapPolicy(parsing: Array(policyText.utf8))) ?? BootstrapPolicy()
        // `true` as the unit starter: a look-up "starts" a unit by running it.
        guard let server = try? BootstrapServer(endpoint: .path(directory + "/bootstrap.sock"), policy: policy,
                                                unitStarter: "/bin/true") else { fail("the server did not start") }
        let right = Mutex<SendRight?>(nil)
        try? worker.performAndWait {
            try? server.start(on: worker.loop)
            right.withLock { $0 = server.makeBootstrapRight() }
        }
        guard let bootstrap = right.withLock({ $0 }) else { fail("the server made no bootstrap right") }
        let session = Session(bootstrap: bootstrap)
        var steps = 0
        while !reader.isAtEnd && steps < 12 {
            steps += 1
            session.run(&reader)
        }
        try? worker.performAndWait { server.stop() }
        withExtendedLifetime(session) {}
        // The loop lets go of the server's sources after the pass that ran
        // `stop`: one more pass, so they are gone before the check.
        try? worker.performAndWait {}
    }

    static let seeds: [[UInt8]] = {
        var seeds: [[UInt8]] = []
        // No policy; a raw look-up of each well-known id with a send-once reply.
        for id in 0..<8 {
            var writer = FuzzWriter()
            writer.byte(0)
            writer.byte(0); writer.byte(id); writer.byte(0); writer.byte(1 << 3)
            seeds.append(writer.bytes)
        }
        // A declared name: check in, look up, send to it, list, unregister.
        var writer = FuzzWriter()
        writer.byte(1); writer.byte(0); writer.byte(0); writer.byte(0)
        for operation in [1, 0, 4, 3, 2] {
            writer.byte(1); writer.byte(operation); writer.byte(0)
        }
        seeds.append(writer.bytes)
        // A client registers, a listing arrives from a hostile server, a welcome too.
        var other = FuzzWriter()
        other.byte(0)
        other.byte(1); other.byte(2); other.byte(9)
        let listing = Array("a\tshared\tactive\t-\t7\nb\t1000\twaiting\tx.service\t-".utf8)
        other.byte(2); other.byte(listing.count); other.bytes(listing)
        other.byte(6); other.byte(0)
        seeds.append(other.bytes)
        return seeds
    }()
}

/// One input's client side: its reply port and the rights it got back.
private final class Session {
    let bootstrap: SendRight
    let replies = ReceiveRight().token
    let client: BootstrapClient
    var held: [AnyObject] = []
    /// The handle of `replies`' registration with the server, once registered.
    var registered: UInt64?

    init(bootstrap: SendRight) {
        self.bootstrap = bootstrap
        client = BootstrapClient(bootstrapPort: bootstrap, timeout: .seconds(10))
    }

    func run(_ reader: inout FuzzReader) {
        switch reader.choice(8) {
        case 0: rawRequest(&reader)
        case 1: clientCall(&reader)
        case 2:
            // A listing page as a hostile server might send it.
            let text = String(decoding: reader.bytes(Int(reader.byte())), as: UTF8.self)
            _ = BootstrapEntry.decode(text)
            let cursor = BootstrapListing.Key(name: BootstrapTarget.names[reader.choice(BootstrapTarget.names.count)],
                                              scope: reader.flag() ? .shared : .user(1000))
            _ = BootstrapListing.decode(text, after: reader.flag() ? cursor : nil)
        case 3:
            if !held.isEmpty { held.remove(at: reader.choice(held.count)) }
        case 4:
            // A message to a name: it waits in a declared name's queue.
            guard let port = try? client.lookUp(name(&reader)) else { return }
            try? port.send(Message(id: 9, body: [1]), timeout: .zero)
        case 5: _ = BootstrapName.decode(reader.bytes(Int(reader.byte())))
        case 6: welcome(&reader)
        default: held.removeAll()
        }
    }

    private func name(_ reader: inout FuzzReader) -> String {
        let choice = reader.byte()
        guard choice >= 0xF0 else { return BootstrapTarget.names[Int(choice) % BootstrapTarget.names.count] }
        return String(decoding: reader.bytes(Int(reader.byte())), as: UTF8.self)
    }

    /// A request as a hostile client writes it: any id, body and rights.
    private func rawRequest(_ reader: inout FuzzReader) {
        // The requests, the introspection ones (ports, introspect, sessions,
        // print, list all, monitor, tap) among them.
        let ids: [Int32] = [0x4842_0001, 0x4842_0002, 0x4842_0003, 0x4842_0004, 0x4842_0005, 0x4842_0006,
                            0x4842_0007, 0x4842_0008, 0x4842_0009, 0x4842_000A, 0x4842_000B, 0x4842_000C,
                            0x4842_000D, 0x4842_000E, 0x4842_0101, 0x5049_4E47, 0]
        var id = ids[reader.choice(ids.count + 1) % ids.count]
        if id == 0 { id = Int32(bitPattern: reader.u32()) }
        var message = Message(id: id, body: Array(name(&reader).utf8))
        let flags = reader.byte()
        // A monitor request's body prefix (or a stray line in any other).
        if flags & 0x20 != 0 { message.body += Array("\n\(reader.byte())".utf8) }
        if flags & 1 != 0 { message.attach(ReceiveRight().makeSendRight()) }
        if flags & 2 != 0 { message.attach(ReceiveRight()) }
        if flags & 4 != 0 { message.attach(ReceiveRight().makeSendOnceRight()) }
        let inbox = ReceiveRight(token: replies)
        var reply = Int(flags >> 3) % 4
        if reply == 1 { message.setReplyRight(inbox.makeSendOnceRight()) }
        if reply == 2 { message.setReplyRight(inbox.makeSendRight()) }
        if reply == 3 {
            // No reply right: the inbox's registration named instead (a
            // stale or made-up handle when the inbox has none: dropped).
            message.id |= 0x100
            message.body += BootstrapRequest.handleBytes(registered ?? UInt64(reader.byte()))
            if registered == nil { reply = 0 }
        }
        guard (try? bootstrap.send(message, timeout: .zero)) != nil, reply != 0 else { return }
        guard var answer = try? inbox.receive(timeout: .seconds(10)) else {
            fail("the name server did not answer request \(id)")
        }
        // Decoded as BootstrapClient decodes a reply.
        _ = BootstrapError.Code.fromWire(answer.id)
        if id == 0x4842_0005 { _ = BootstrapListing.decode(answer.text, after: nil) }
        if id == 0x4842_0007, reply == 2, answer.id == 0 {
            guard answer.body.count == 8 else { fail("a registration answered with \(answer.body.count) bytes") }
            registered = BootstrapRequest.handle(endingThe: answer.body)
        }
        if let right = try? answer.takeSendRight(at: 0) { held.append(right.token) }
        do { held.append(try answer.takeReceiveRight(at: 0).token) } catch {}
    }

    private func clientCall(_ reader: inout FuzzReader) {
        let operation = reader.choice(5)
        let name = name(&reader)
        do {
            switch operation {
            case 0: held.append(try client.lookUp(name).token)
            case 1: held.append(try client.checkIn(name).token)
            case 2:
                let port = ReceiveRight()
                held.append(port.token)
                try client.register(name, port.makeSendRight())
            case 3: try client.unregister(name)
            default: _ = try client.list()
            }
        } catch {
            if error.code == .timedOut { fail("the name server did not answer: \(error)") }
        }
    }

    /// A welcome from a fake server, as a client's first message: an
    /// encoded message with a send right, one byte of it changed.
    private func welcome(_ reader: inout FuzzReader) {
        guard let (receiving, sending) = try? SeqPacketSocket.makePair(),
              (try? SeqPacketSocket.setOption(receiving.rawValue, charbor_SO_PASSCRED, 1)) != nil else { return }
        let port = ReceiveRight()
        let content = MessageContent(id: 0, body: Array("harbor bootstrap".utf8), rights: [.send(SendRightToken(port: port.core))],
                                     trailer: MessageTrailer(sender: .current), countsAgainstLimit: false)
        var encoder = WireEncoder(export: PortCore.export)
        guard let encoded = try? encoder.encode(content) else { return }
        var head = encoded.head
        let tail = encoded.tail
        encoder.patch(&head, descriptorCount: encoder.descriptors.count)
        var bytes = head + content.body + tail
        var descriptors = encoder.descriptors.map { $0.rawValue }
        switch reader.choice(4) {
        case 0: break
        case 1: bytes[Int(reader.u16()) % bytes.count] = reader.byte()
        case 2: bytes = Array(bytes.prefix(Int(reader.byte())))
        default: descriptors.removeLast()
        }
        _ = bytes.withUnsafeBytes { try? SeqPacketSocket.send(sending.rawValue, parts: [$0], descriptors: descriptors) }
        withExtendedLifetime(encoder) {}
        guard var message = try? FirstMessage.receive(over: receiving, timeout: .zero) else { return }
        if let right = try? message.takeSendRight(at: 0) { held.append(right.token) }
    }
}
