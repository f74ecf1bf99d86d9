// Harbor — `harbor watch`: check a name in and print what arrives.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborPorts

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Check a name in and print each message that arrives at it.",
        discussion: """
            Takes the name's receive right, so messages sent before the watch started (to a declared \
            name) are printed first. Answers pings (`harbor ping`). Stops after --count messages, or \
            exits 4 if none arrives within --idle seconds; otherwise runs until interrupted. Prints \
            `watching NAME …` once checked in, then a line a message: `id ID from pid PID uid UID`, \
            then `: "TEXT"` (quoted) or `: N bytes HEX`, then `(relayed by pid PID uid UID)`, \
            `(+N rights)`, `(reply right)` where they apply. With --json: one object a line, \
            {"event": "watching", "name", "waiting"} first, then {"event": "message", "name", "id", \
            "pid", "uid", "relayed_by", "rights", "reply_right", "text", "hex"} a message \
            (Docs/schemas/harbor-watch.schema.json). \
            Exit status 0 after --count messages, 1 refused (the name is held), 2 no such name, \
            3 name server unreachable, 4 no message within --idle, 5 not permitted, 6 over quota.
            """)

    @Argument(help: "The service name to check in.") var name: String
    @Option(name: [.short, .long], help: "Exit 0 after this many messages.") var count: Int?
    @Option(name: .long, help: ArgumentHelp("Exit 4 if no message arrives for this many seconds.", valueName: "seconds"))
    var idle: Double?
    @Flag(name: .long, help: "Print nothing per message (still answer pings): a quiet echo service.")
    var quiet = false
    @Flag(name: .long, help: "Print one JSON object a line (Docs/schemas/harbor-watch.schema.json).")
    var json = false
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let idle, !(idle > 0 && idle <= 86_400) { throw ValidationError("--idle must be between 0 and 86400 seconds") }
    }

    func run() throws {
        let client = try connection.connect()
        let port: ReceiveRight
        do { port = try client.checkIn(name) } catch { throw CommandFailure(error, name: name) }
        let waiting = port.status.queuedMessages
        if json {
            say(JSONText.object([("event", JSONText.string("watching")), ("name", JSONText.string(name)),
                                 ("waiting", String(waiting))]))
        } else {
            say("watching \(name) (checked in" + (waiting > 0 ? ", \(waiting) message\(waiting == 1 ? "" : "s") waiting)" : ")"))
        }
        var received = 0
        let idleLimit = idle.map { Duration.milliseconds(Int64($0 * 1000)) }
        while count.map({ received < $0 }) ?? true {
            var message: Message
            do { message = try port.receive(timeout: idleLimit) } catch where error.code == .timedOut {
                throw CommandFailure("\(name): no message for \(idle ?? 0) s", code: 4)
            } catch {
                throw CommandFailure(portFailure: error, name: name)
            }
            received += 1
            if !quiet { say(json ? jsonObject(for: message) : line(for: message)) }
            if message.id == bootstrapPingID && message.hasReplyRight {
                try? message.reply(Message(id: bootstrapPingID, body: message.body), timeout: .zero)
            }
        }
    }

    /// "id 7 from pid 42 uid 0: "text"", then " (relayed by pid 9 uid
    /// 61234)" for a message relayed in a moved port (`Security.md`) and
    /// the rights it carries. A body that is valid UTF-8 with no C0 control
    /// but tab is shown as quoted text, its controls, C1 and bidi
    /// characters escaped (``TerminalText``); any other body as hex.
    private func line(for message: borrowing Message) -> String {
        let sender = message.trailer.sender
        var text = "id \(message.id == bootstrapPingID ? "PING" : String(message.id)) from pid \(sender.pid) uid \(sender.uid)"
        let body = message.body
        if !body.isEmpty {
            if let string = String(validating: body, as: UTF8.self), string.unicodeScalars.allSatisfy({ $0.value >= 32 || $0 == "\t" }) {
                text += ": " + TerminalText.quoted(string)
            } else {
                text += ": \(body.count) bytes " + Self.hex(body.prefix(16)) + (body.count > 16 ? "…" : "")
            }
        }
        if let relay = message.trailer.relayedBy { text += " (relayed by pid \(relay.pid) uid \(relay.uid))" }
        let rights = message.carriedRights.count
        if rights > 0 { text += " (+\(rights) right\(rights == 1 ? "" : "s"))" }
        if message.hasReplyRight { text += " (reply right)" }
        return text
    }

    /// One message as a JSON object (Docs/schemas/harbor-watch.schema.json):
    /// the body as `text` when it is valid UTF-8 (else null, JSON-escaped,
    /// controls as `\uXXXX`) and always as `hex`.
    private func jsonObject(for message: borrowing Message) -> String {
        let sender = message.trailer.sender
        let body = message.body
        let relay = message.trailer.relayedBy.map { relay in
            JSONText.object([("pid", String(relay.pid)), ("uid", String(relay.uid))])
        }
        return JSONText.object([
            ("event", JSONText.string("message")), ("name", JSONText.string(name)),
            ("id", String(message.id)), ("pid", String(sender.pid)), ("uid", String(sender.uid)),
            ("relayed_by", relay ?? "null"), ("rights", String(message.carriedRights.count)),
            ("reply_right", message.hasReplyRight ? "true" : "false"),
            ("text", JSONText.optional(String(validating: body, as: UTF8.self))),
            ("hex", JSONText.string(Self.hex(body))),
        ])
    }

    /// Bytes as lowercase hex, two digits each.
    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }
}
