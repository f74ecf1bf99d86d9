// Harbor — the helper process the cross-process tests spawn.
//
// It receives its first message from the test (a role in the body, a send
// right home as right 0), makes a port of its own, sends home a hello
// carrying a send right to it, and then serves commands by message id.
import Glibc
import Harbor

enum Command {
    static let hello: Int32 = 100
    static let echo: Int32 = 1         // reply with the same body
    static let forward: Int32 = 2      // rights [x, y]: send x to y as a `use`
    static let use: Int32 = 3          // rights [x]: send x "used by <pid>"
    static let used: Int32 = 4
    static let drain: Int32 = 5        // rights [receive]: destroy it, reply with its queued bodies
    static let stall: Int32 = 6        // set the queue limit to body, reply, stop receiving
    static let hold: Int32 = 7         // rights [x]: keep x until exit
    static let region: Int32 = 8       // reply "count:sum" of the first out-of-line region
    static let exit: Int32 = 9
    static let useHeld: Int32 = 10     // send "used by <pid>" on every held send right, reply
    static let keep: Int32 = 11        // rights [receive]: keep it until exit, reply
    static let receiveKept: Int32 = 12 // receive on the kept right for body ms, reply its text or "timeout"
    static let drainTrailers: Int32 = 13 // rights [receive]: reply "text@pid@relayedBy" per queued message
    static let keepNew: Int32 = 14     // keep a new port, reply with a send-once right to it
    static let burst: Int32 = 15       // send home body-text-many messages, ids 0..<n, body "i", then reply
    // P12 misbehaviour (Misbehaviour.swift), on right 0 (a send right) or home:
    static let rawFlood: Int32 = 50    // body "n": n counted raw messages, no slot taken
    static let rawWaits: Int32 = 51    // body "n": n wait packets, a fresh eventfd each
    static let rawFragment: Int32 = 52 // body "declared sent": a fragmented message never finished
    static let scribble: Int32 = 53    // body full|full-loop|hoard|room|magic: write the slot counter
    static let regions: Int32 = 54     // body "count bytes": messages with one sparse sealed region each
    static let rights: Int32 = 55      // body "messages copies": messages with copies of one send right
    static let payload: Int32 = 56     // body "bytes": one Message(id:payload:)
    static let stats: Int32 = 40       // reply "key=value ...": the port's status and WireRejections by reason
    static let grant: Int32 = 41       // reply with a new send right to the port (a connection of its own)
    static let whoami: Int32 = 42      // reply "uid=U pid=P": the request's trailer.sender
    static let limitFiles: Int32 = 60  // body "n": RLIMIT_NOFILE so that n more descriptors fit, reply "limit=L"
    static let truncations: Int32 = 61 // reply how many packets were refused for truncated control data
}

func serve() throws {
    var first = try Message.receiveInitial(timeout: .seconds(30))
    let home = try first.takeSendRight(at: 0)
    let port = ReceiveRight()
    var held: [SendRight] = []
    var kept: ReceiveRight? = nil
    var hello = Message(id: Command.hello, text: "pid \(getpid())")
    hello.attach(port.makeSendRight())
    try home.send(hello)
    while true {
        var message = try port.receive()
        // A reply that cannot be delivered (the asker's right died, or its
        // socket stays full) is the asker's loss: the service keeps serving.
        do {
            switch message.id {
            case Command.echo:
                let body = message.body
                try message.reply(Message(id: Command.echo, body: body))
            case Command.forward:
                let what = try message.takeSendRight(at: 0)
                let to = try message.takeSendRight(at: 1)
                var use = Message(id: Command.use)
                use.attach(what)
                try to.send(use)
            case Command.use:
                let what = try message.takeSendRight(at: 0)
                try what.send(Message(id: Command.used, text: "used by \(getpid())"))
            case Command.drain:
                let moved = try message.takeReceiveRight(at: 0)
                var bodies: [String] = []
                while let queued = moved.tryReceive() { bodies.append(queued.text) }
                moved.destroy()  // before replying, so the sender sees a dead name by then
                try message.reply(Message(id: Command.drain, text: bodies.joined(separator: ",")))
            case Command.stall:
                try port.setQueueLimit(Int(message.text) ?? 1)
                try message.reply(Message(id: Command.stall, text: "stalled"))
                // Still using `port` after each wake keeps it alive (a ~Copyable
                // value may otherwise die after its last use).
                while true {
                    pause()
                    _ = port.status
                }
            case Command.hold:
                held.append(try message.takeSendRight(at: 0))
            case Command.region:
                let region = message.regions.first
                let summary = region.map { region in
                    region.withUnsafeBytes { bytes in
                        "\(bytes.count):\(bytes.reduce(UInt32(0)) { $0 &+ UInt32($1) })"
                    }
                } ?? "none"
                try message.reply(Message(id: Command.region, text: summary))
            case Command.useHeld:
                for right in held { try right.send(Message(id: Command.used, text: "used by \(getpid())")) }
                try message.reply(Message(id: Command.useHeld, text: "done"))
            case Command.keep:
                kept = try message.takeReceiveRight(at: 0)
                try message.reply(Message(id: Command.keep, text: "kept"))
            case Command.keepNew:
                let fresh = ReceiveRight()
                var reply = Message(id: Command.keepNew, text: "new")
                reply.attach(fresh.makeSendOnceRight())
                kept = consume fresh
                try message.reply(reply)
            case Command.receiveKept:
                let milliseconds = Int(message.text) ?? 1000
                var text = "timeout"
                if let got = try? kept?.receive(timeout: Duration.milliseconds(milliseconds)) {
                    text = got.id == Command.used ? got.text : "#\(got.id)"
                }
                try message.reply(Message(id: Command.receiveKept, text: text))
            case Command.drainTrailers:
                let moved = try message.takeReceiveRight(at: 0)
                var entries: [String] = []
                while let queued = moved.tryReceive() {
                    let trailer = queued.trailer
                    entries.append("\(queued.text)@\(trailer.sender.pid)@\(trailer.claimedOriginalSender.map { "\($0.pid)" } ?? "-")")
                }
                try message.reply(Message(id: Command.drainTrailers, text: entries.joined(separator: ",")))
            case Command.burst:
                for index in 0..<(Int(message.text) ?? 0) { try home.send(Message(id: Int32(index), text: "\(index)")) }
                try message.reply(Message(id: Command.burst, text: "sent"))
            case Command.limitFiles:
                try message.reply(Message(id: Command.limitFiles, text: limitFiles(room: Int(message.text) ?? 1)))
            case Command.truncations:
                try message.reply(Message(id: Command.truncations, text: "\(WireRejections.count(.controlTruncated))"))
            case Command.stats:
                try message.reply(Message(id: Command.stats, text: statistics(port.status)))
            case Command.grant:
                var granted = Message(id: Command.grant)
                granted.attach(port.makeSendRight())
                try message.reply(granted)
            case Command.whoami:
                let sender = message.trailer.sender
                try message.reply(Message(id: Command.whoami, text: "uid=\(sender.uid) pid=\(sender.pid)"))
            case Command.rawFlood...Command.payload:
                let target = message.carriedRights.first == .send ? try message.takeSendRight(at: 0) : home
                let done = Misbehaviour.run(message.id, message.text, target: target)
                try message.reply(Message(id: message.id, text: done))
            case Command.exit:
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
