// Harbor — the helper process the cross-process tests spawn.
//
// It receives its first message from the test (a role in the body, a send
// right home as right 0), makes a port of its own, sends home a hello
// carrying a send right to it, and then serves commands by message id
// (PeerCommand, Sources/HarborPeerCommands: shared with the tests).
import Glibc
import Harbor
import HarborPeerCommands

func serve() throws {
    var first = try Message.receiveInitial(timeout: .seconds(30))
    let home = try first.takeSendRight(at: 0)
    let port = ReceiveRight()
    var held: [SendRight] = []
    var kept: ReceiveRight? = nil
    var hello = Message(id: PeerCommand.hello, text: "pid \(getpid())")
    hello.attach(port.makeSendRight())
    try home.send(hello)
    while true {
        var message = try port.receive()
        // A reply that cannot be delivered (the asker's right died, or its
        // socket stays full) is the asker's loss: the service keeps serving.
        do {
            switch message.id {
            case PeerCommand.echo:
                let body = message.body
                try message.reply(Message(id: PeerCommand.echo, body: body))
            case PeerCommand.forward:
                let what = try message.takeSendRight(at: 0)
                let to = try message.takeSendRight(at: 1)
                var use = Message(id: PeerCommand.use)
                use.attach(what)
                try to.send(use)
            case PeerCommand.sendTo:
                let to = try message.takeSendRight(at: 0)
                let bytes = message.body
                guard bytes.count >= 4 else { throw PortError(.invalidArgument, "a sendTo body starts with an id") }
                let id = bytes[0..<4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
                try to.send(Message(id: Int32(bitPattern: id), body: Array(bytes[4...])), timeout: .seconds(2))
                try message.reply(Message(id: PeerCommand.sendTo, text: "sent"))
            case PeerCommand.use:
                let what = try message.takeSendRight(at: 0)
                try what.send(Message(id: PeerCommand.used, text: "used by \(getpid())"))
            case PeerCommand.drain:
                let moved = try message.takeReceiveRight(at: 0)
                var bodies: [String] = []
                while let queued = moved.tryReceive() { bodies.append(queued.text) }
                moved.destroy()  // before replying, so the sender sees a dead name by then
                try message.reply(Message(id: PeerCommand.drain, text: bodies.joined(separator: ",")))
            case PeerCommand.drainFiles:
                try message.reply(Message(id: PeerCommand.drainFiles, text: "written=\(try drainFiles(&message))"))
            case PeerCommand.stall:
                try port.setQueueLimit(Int(message.text) ?? 1)
                try message.reply(Message(id: PeerCommand.stall, text: "stalled"))
                // Still using `port` after each wake keeps it alive (a ~Copyable
                // value may otherwise die after its last use).
                while true {
                    pause()
                    _ = port.status
                }
            case PeerCommand.hold:
                held.append(try message.takeSendRight(at: 0))
            case PeerCommand.region:
                let region = message.regions.first
                let summary = region.map { region in
                    region.withUnsafeBytes { bytes in
                        "\(bytes.count):\(bytes.reduce(UInt32(0)) { $0 &+ UInt32($1) })"
                    }
                } ?? "none"
                try message.reply(Message(id: PeerCommand.region, text: summary))
            case PeerCommand.useHeld:
                for right in held { try right.send(Message(id: PeerCommand.used, text: "used by \(getpid())")) }
                try message.reply(Message(id: PeerCommand.useHeld, text: "done"))
            case PeerCommand.keep:
                kept = try message.takeReceiveRight(at: 0)
                try message.reply(Message(id: PeerCommand.keep, text: "kept"))
            case PeerCommand.keepNew:
                let fresh = ReceiveRight()
                if message.text == "cgroups" { fresh.readSenderCgroups() }
                var reply = Message(id: PeerCommand.keepNew, text: "new")
                reply.attach(fresh.makeSendOnceRight())
                kept = consume fresh
                try message.reply(reply)
            case PeerCommand.giveKept:
                var reply = Message(id: PeerCommand.giveKept, text: kept == nil ? "none" : "gave")
                if let right = kept.take() { reply.attach(right) }
                try message.reply(reply)
            case PeerCommand.receiveKept:
                let milliseconds = Int(message.text) ?? 1000
                var text = "timeout"
                if let got = try? kept?.receive(timeout: Duration.milliseconds(milliseconds)) {
                    text = got.id == PeerCommand.used ? got.text : "#\(got.id)"
                }
                try message.reply(Message(id: PeerCommand.receiveKept, text: text))
            case PeerCommand.receiveKeptInSet:
                let milliseconds = Int(message.text) ?? 1000
                var text = "timeout"
                if let right = kept.take() {
                    let set = try PortSet()
                    try set.insert(right)
                    if let got = try? set.receive(timeout: Duration.milliseconds(milliseconds)) {
                        text = got.id == PeerCommand.used ? got.text : "#\(got.id)"
                    }
                    set.remove(right)
                    kept = consume right
                }
                try message.reply(Message(id: PeerCommand.receiveKeptInSet, text: text))
            case PeerCommand.drainTrailers:
                let moved = try message.takeReceiveRight(at: 0)
                var entries: [String] = []
                while let queued = moved.tryReceive() {
                    let trailer = queued.trailer
                    entries.append("\(queued.text)@\(trailer.sender.pid)@\(trailer.claimedOriginalSender.map { "\($0.pid)" } ?? "-")")
                }
                try message.reply(Message(id: PeerCommand.drainTrailers, text: entries.joined(separator: ",")))
            case PeerCommand.coded:
                try serveCoded(&message)
            case PeerCommand.codedFile:
                try serveCodedFile(&message)
            case PeerCommand.burst:
                for index in 0..<(Int(message.text) ?? 0) { try home.send(Message(id: Int32(index), text: "\(index)")) }
                try message.reply(Message(id: PeerCommand.burst, text: "sent"))
            case PeerCommand.limitFiles:
                try message.reply(Message(id: PeerCommand.limitFiles, text: limitFiles(room: Int(message.text) ?? 1)))
            case PeerCommand.truncations:
                try message.reply(Message(id: PeerCommand.truncations, text: "\(WireRejections.count(.controlTruncated))"))
            case PeerCommand.stats:
                try message.reply(Message(id: PeerCommand.stats, text: statistics(port.status)))
            case PeerCommand.grant:
                var granted = Message(id: PeerCommand.grant)
                granted.attach(port.makeSendRight())
                try message.reply(granted)
            case PeerCommand.whoami:
                let sender = message.trailer.sender
                try message.reply(Message(id: PeerCommand.whoami, text: "uid=\(sender.uid) pid=\(sender.pid)"))
            case PeerCommand.misbehaviour:
                let target = message.carriedRights.first == .send ? try message.takeSendRight(at: 0) : home
                let done = Misbehaviour.run(message.id, message.text, target: target)
                try message.reply(Message(id: message.id, text: done))
            case PeerCommand.exit:
                held.removeAll()
                kept = nil
                return
            default:
                break
            }
        } catch {
            print("harbor-peer: message \(message.id): \(error)")
        }
    }
}

/// Lowers RLIMIT_NOFILE so that exactly `room` more descriptors may be
/// opened (the lowest free numbers): arriving packets' descriptors are then
/// cut short (MSG_CTRUNC). Descriptors numbered above the limit stay open.
func limitFiles(room: Int) -> String {
    var open: Set<Int> = []
    if let directory = opendir("/proc/self/fd") {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if let fd = Int(name) { open.insert(fd) }
        }
        closedir(directory)
    }
    var number = 0, free = 0
    while free < room || open.contains(number) {
        if !open.contains(number) { free += 1 }
        number += 1
    }
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = rlim_t(number)
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return "failed: errno \(errno)" }
    return "limit=\(limit.rlim_cur)"
}

/// The port's counters and every refusal reason with its count, as
/// `key=value` words (spaces in a reason's name become dashes).
func statistics(_ status: PortStatus) -> String {
    var words = ["limit=\(status.queueLimit)", "queued=\(status.queuedMessages)", "senders=\(status.sendRights)",
                 "dead=\(status.isDead)", "refused=\(WireRejections.total)"]
    for reason in WireRejectionReason.allCases {
        words.append("\(String(reason.description.map { $0 == " " ? "-" : $0 }))=\(WireRejections.count(reason))")
    }
    return words.joined(separator: " ")
}

do {
    try serve()
} catch {
    print("harbor-peer: \(error)")
    exit(1)
}
