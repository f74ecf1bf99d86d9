// Harbor — `harbor send` and `harbor ping`.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborPorts

struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a text message to a service by name.",
        discussion: """
            The message waits in the port if the service has not checked in yet. "sent" means handed to the \
            name's port: harbord keeps a message for a name not checked in only within its limits (128 per \
            name from one uid, 1,024 from all, 1,024 per uid in all; Docs/harbord.md, "Limits") and drops one \
            over them; no reply right is attached, so that the service sees the message as sent, and a drop \
            shows only in harbord's log. Prints `sent id ID to NAME: "TEXT"`, the text quoted and last. \
            With --json: one object {"name", "id", "text"} (Docs/schemas/harbor-send.schema.json). \
            Exit status 0 sent, 1 refused, 2 no such name, 3 name server unreachable or the service's \
            port gone, 4 no room in time (queue full), 5 not permitted.
            """)

    @Argument(help: "The service name.") var name: String
    @Argument(help: "The message text (words are joined by spaces).") var words: [String] = []
    @Option(name: .long, help: "The message id.") var id: Int32 = 1
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object (Docs/schemas/harbor-send.schema.json).")
    var json = false

    func run() throws {
        let client = try connection.connect()
        let service: SendRight
        do { service = try client.lookUp(name) } catch { throw CommandFailure(error, name: name) }
        let text = words.joined(separator: " ")
        do { try service.send(Message(id: id, text: text), timeout: connection.duration) } catch {
            throw CommandFailure(portFailure: error, name: name)
        }
        if json {
            say(JSONText.object([("name", JSONText.string(name)), ("id", String(id)), ("text", JSONText.string(text))]))
        } else {
            say("sent id \(id) to \(name): \(TerminalText.quoted(text))")
        }
    }
}

struct Ping: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Time request/reply round trips to a service by name.",
        discussion: """
            Sends messages with id 0x50494E47 ("PING") carrying a send-once reply right; `harbor watch` \
            and the demo service answer them. Prints `PING NAME: look-up TIME`, a line a reply \
            (`reply from NAME: seq N time TIME`; up to 20) and a summary; times are one field each \
            (`85.2µs`, `1.34ms`). With --json: one object at the end {"name", "sent", "replies", \
            "lookup_us", "rtt_us", "min_us", "median_us", "max_us"} \
            (Docs/schemas/harbor-ping.schema.json), times in microseconds, null for a ping with no reply. \
            Exit status 0 every ping answered, 1 refused, 2 no such name, 3 name server unreachable or \
            the service's port gone, 4 a ping got no reply in time, 5 not permitted.
            """)

    @Argument(help: "The service name.") var name: String
    @Option(name: [.short, .long], help: "How many pings.") var count: Int = 4
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object at the end (Docs/schemas/harbor-ping.schema.json).")
    var json = false

    func validate() throws {
        guard (1...1_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 1000000") }
    }

    func run() throws {
        let client = try connection.connect()
        let lookUpStart = ContinuousClock.now
        let service: SendRight
        do { service = try client.lookUp(name) } catch { throw CommandFailure(error, name: name) }
        let lookUpTime = ContinuousClock.now - lookUpStart
        if !json { say("PING \(name): look-up \(format(lookUpTime))") }
        let replies = ReceiveRight()
        var times: [Duration] = []
        var each: [Duration?] = []
        for sequence in 1...count {
            var request = Message(id: bootstrapPingID, text: "\(sequence)")
            request.setReplyRight(replies.makeSendOnceRight())
            let start = ContinuousClock.now
            do {
                try service.send(request, timeout: connection.duration)
                let reply = try replies.receive(timeout: connection.duration)
                let elapsed = ContinuousClock.now - start
                if reply.notification != nil {
                    each.append(nil)
                    if !json { say("seq \(sequence): no reply (the service dropped the reply right)") }
                    continue
                }
                times.append(elapsed)
                each.append(elapsed)
                if count <= 20 && !json { say("reply from \(name): seq \(sequence) time \(format(elapsed))") }
            } catch where error.code == .timedOut {
                each.append(nil)
                if !json { say("seq \(sequence): no reply within \(connection.timeout)s") }
            } catch {
                throw CommandFailure(portFailure: error, name: name)
            }
        }
        let sorted = times.sorted()
        if json {
            let micro = { (time: Duration?) in time.map { microseconds($0) } ?? "null" }
            say(JSONText.object([
                ("name", JSONText.string(name)), ("sent", String(count)), ("replies", String(times.count)),
                ("lookup_us", microseconds(lookUpTime)),
                ("rtt_us", "[" + each.map(micro).joined(separator: ",") + "]"),
                ("min_us", micro(sorted.first)), ("median_us", micro(sorted.isEmpty ? nil : sorted[sorted.count / 2])),
                ("max_us", micro(sorted.last)),
            ]))
        }
        var summary = "--- \(name): \(count) sent, \(times.count) replies"
        if let first = sorted.first, let last = sorted.last {
            summary += "; min \(format(first)), median \(format(sorted[sorted.count / 2])), max \(format(last))"
        }
        if !json { say(summary) }
        if times.count < count { throw CommandFailure("\(count - times.count) of \(count) pings got no reply", code: 4) }
    }
}

extension CommandFailure {
    init(portFailure error: PortError, name: String) {
        switch error.code {
        case .deadName: self.init("\(name): the service's port is gone (\(error.detail))", code: 3)
        case .timedOut, .queueFull: self.init("\(name): \(error.detail)", code: 4)
        default: self.init("\(name): \(error.detail)", code: 1)
        }
    }
}

/// "85.2µs", "1.34ms": one field, no space.
func format(_ duration: Duration) -> String {
    let nanoseconds = duration / .nanoseconds(1)
    if nanoseconds < 1_000_000 {
        let tenths = (Int(nanoseconds) + 50) / 100
        return "\(tenths / 10).\(tenths % 10)µs"
    }
    let hundredths = (Int(nanoseconds) + 5_000) / 10_000
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)ms"
}

/// A duration in microseconds as a JSON number, to a tenth: "85.2".
func microseconds(_ duration: Duration) -> String {
    let tenths = (Int(duration / .nanoseconds(1)) + 50) / 100
    return "\(tenths / 10).\(tenths % 10)"
}
