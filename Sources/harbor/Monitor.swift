// Harbor — `harbor monitor`: a name's traffic as it arrives (busctl monitor), from its holder's tap.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborPorts

struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print each message a name's port admits, as it arrives (like busctl monitor).",
        discussion: """
            Asks harbord, which checks that you are root or of the uid holding the name (as the kernel \
            reported it) and passes the question to the holder's session; the holder taps the name's \
            port and sends a record of every message it admits to this command, from a thread of its \
            own, until this command exits. Records are of what the port admits, whoever sent it; the \
            holder never waits for this command (records it has no room for are counted as dropped, \
            and said). Prints `monitoring NAME pid PID port PORT` once tapped, then a line a message: \
            TIME (UTC, microseconds) id ID size BYTES from pid PID uid UID, then `relayed by pid PID uid \
            UID`, `rights SEND/SEND-ONCE/RECEIVE`, `reply send|send-once`, `files N`, `regions N`, \
            `notification`, `depth N`, `dropped N` where they apply. Root may name another uid's name \
            with --uid. Stops after --count messages, after --seconds, on SIGINT, SIGTERM or SIGHUP, \
            or when the name's port dies (then prints the holder's summary). \
            With --json: one object a line, {"event": "monitoring", "name", "pid", "port"} first, then \
            {"event": "message", "name", "index", "time_ns", "id", "size", "send", "send_once", \
            "receive", "reply_right", "files", "regions", "pid", "uid", "relayed_by", "notification", \
            "depth", "dropped_before", "hex"} a message, and {"event": "ended", "name", "admitted", \
            "dropped", "lost"} when the name's port died (Docs/schemas/harbor-monitor.schema.json). \
            Exit status 0 stopped, 2 no such name (or not held by a running process), 3 name server \
            unreachable (or the holder died), 4 no answer in time (or the holder forwards to as many \
            monitors as it allows), 5 not permitted.
            """)

    @OptionGroup var target: MonitorOptions
    @Option(name: .long, help: ArgumentHelp("Body bytes to show a message (at most 4096).", valueName: "bytes"))
    var bodyPrefix: Int = 16
    @Flag(name: .long, help: "Print one JSON object a line (Docs/schemas/harbor-monitor.schema.json).")
    var json = false
    @OptionGroup var connection: ConnectionOptions

    private var name: String { target.name }

    func validate() throws {
        guard (0...4096).contains(bodyPrefix) else { throw ValidationError("--body-prefix must be between 0 and 4096") }
    }

    func run() throws {
        let client = try connection.connect()
        let stream = try target.stream(bodyPrefix: bodyPrefix, client: client)
        if json {
            say(JSONText.object([("event", JSONText.string("monitoring")), ("name", JSONText.string(name)),
                                 ("pid", String(stream.pid)), ("port", String(stream.port))]))
        } else {
            say("monitoring \(name) pid \(stream.pid) port \(stream.port)")
        }
        let summary = try stream.run(count: target.count, seconds: target.seconds) { record in
            say(json ? jsonObject(record) : line(record))
        }
        guard let summary else { return }
        if json {
            say(JSONText.object([("event", JSONText.string("ended")), ("name", JSONText.string(name)),
                                 ("admitted", String(summary.admitted)), ("dropped", String(summary.dropped)),
                                 ("lost", String(summary.lost))]))
        } else {
            say("ended: \(name)'s port died; admitted \(summary.admitted) dropped \(summary.dropped) lost \(summary.lost)")
        }
    }

    /// One record as a line whose fields split on whitespace.
    private func line(_ record: PortCaptureRecord) -> String {
        var fields = [Self.time(record.wallNanoseconds), "id", String(record.id), "size", String(record.bodySize),
                      "from", "pid", String(record.sender.pid), "uid", String(record.sender.uid)]
        if let relay = record.relayedBy { fields += ["relayed", "by", "pid", String(relay.pid), "uid", String(relay.uid)] }
        if record.sendRights + record.sendOnceRights + record.receiveRights > 0 {
            fields += ["rights", "\(record.sendRights)/\(record.sendOnceRights)/\(record.receiveRights)"]
        }
        if let reply = record.replyRight { fields += ["reply", reply == .send ? "send" : "send-once"] }
        if record.files > 0 { fields += ["files", String(record.files)] }
        if !record.regionSizes.isEmpty { fields += ["regions", String(record.regionSizes.count)] }
        if record.isNotification { fields.append("notification") }
        fields += ["depth", String(record.queueDepth)]
        if record.droppedBefore > 0 { fields += ["dropped", String(record.droppedBefore)] }
        if !record.bodyPrefix.isEmpty { fields += ["hex", Self.hex(record.bodyPrefix)] }
        return fields.joined(separator: " ")
    }

    /// One record as a JSON object (Docs/schemas/harbor-monitor.schema.json).
    private func jsonObject(_ record: PortCaptureRecord) -> String {
        let relay = record.relayedBy.map { JSONText.object([("pid", String($0.pid)), ("uid", String($0.uid))]) }
        let reply = record.replyRight.map { JSONText.string($0 == .send ? "send" : "send-once") }
        return JSONText.object([
            ("event", JSONText.string("message")), ("name", JSONText.string(name)), ("index", String(record.index)),
            ("time_ns", String(record.wallNanoseconds)), ("id", String(record.id)), ("size", String(record.bodySize)),
            ("send", String(record.sendRights)), ("send_once", String(record.sendOnceRights)),
            ("receive", String(record.receiveRights)), ("reply_right", reply ?? "null"), ("files", String(record.files)),
            ("regions", String(record.regionSizes.count)), ("pid", String(record.sender.pid)),
            ("uid", String(record.sender.uid)), ("relayed_by", relay ?? "null"),
            ("notification", record.isNotification ? "true" : "false"), ("depth", String(record.queueDepth)),
            ("dropped_before", String(record.droppedBefore)), ("hex", JSONText.string(Self.hex(record.bodyPrefix))),
        ])
    }

    /// `HH:MM:SS.uuuuuu`, UTC.
    static func time(_ nanoseconds: Int64) -> String {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let micros = Int(nanoseconds % 1_000_000_000 / 1000)
        func two(_ value: CInt) -> String { value < 10 ? "0\(value)" : String(value) }
        let fraction = String(micros)
        return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))."
            + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// Bytes as lowercase hex, two digits each.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
