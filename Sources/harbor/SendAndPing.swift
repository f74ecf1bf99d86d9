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
            shows only in harbord's log.
            """)

    @Argument(help: "The service name.") var name: String
    @Argument(help: "The message text (words are joined by spaces).") var words: [String] = []
    @Option(name: .long, help: "The message id.") var id: Int32 = 1
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let client = try connection.connect()
        let service: SendRight
        do { service = try client.lookUp(name) } catch { throw CommandFailure(error, name: name) }
        let text = words.joined(separator: " ")
        do { try service.send(Message(id: id, text: text), timeout: connection.duration) } catch {
            throw CommandFailure(portFailure: error, name: name)
        }
        say("sent id \(id) \(TerminalText.quoted(text)) to \(name)")
    }
}

struct Ping: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Time request/reply round trips to a service by name.",
        discussion: """
            Sends messages with id 0x50494E47 ("PING") carrying a send-once reply right; `harbor watch` \
            and the demo service answer them. Exit status 4 if any ping got no reply in time.
            """)

    @Argument(help: "The service name.") var name: String
    @Option(name: [.short, .long], help: "How many pings.") var count: Int = 4
    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard (1...1_000_000).contains(count) else { throw ValidationError("--count must be between 1 and 1000000") }
    }

    func run() throws {
        let client = try connection.connect()
        let lookUpStart = ContinuousClock.now
        let service: SendRight
        do { service = try client.lookUp(name) } catch { throw CommandFailure(error, name: name) }
        say("PING \(name): look-up \(format(ContinuousClock.now - lookUpStart))")
        let replies = ReceiveRight()
        var times: [Duration] = []
        for sequence in 1...count {
            var request = Message(id: bootstrapPingID, text: "\(sequence)")
            request.setReplyRight(replies.makeSendOnceRight())
            let start = ContinuousClock.now
            do {
                try service.send(request, timeout: connection.duration)
                let reply = try replies.receive(timeout: connection.duration)
                let elapsed = ContinuousClock.now - start
                if reply.notification != nil {
                    say("seq \(sequence): no reply (the service dropped the reply right)")
                    continue
                }
                times.append(elapsed)
                if count <= 20 { say("reply from \(name): seq \(sequence) time \(format(elapsed))") }
            } catch where error.code == .timedOut {
                say("seq \(sequence): no reply within \(connection.timeout) s")
            } catch {
                throw CommandFailure(portFailure: error, name: name)
            }
        }
        let sorted = times.sorted()
        var summary = "--- \(name): \(count) sent, \(times.count) replies"
        if let first = sorted.first, let last = sorted.last {
            summary += "; min \(format(first)), median \(format(sorted[sorted.count / 2])), max \(format(last))"
        }
        say(summary)
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

/// "85.2 µs", "1.34 ms".
func format(_ duration: Duration) -> String {
    let nanoseconds = duration / .nanoseconds(1)
    if nanoseconds < 1_000_000 {
        let tenths = (Int(nanoseconds) + 50) / 100
        return "\(tenths / 10).\(tenths % 10) µs"
    }
    let hundredths = (Int(nanoseconds) + 5_000) / 10_000
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) ms"
}
