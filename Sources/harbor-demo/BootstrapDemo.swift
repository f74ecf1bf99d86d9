// Harbor — the name-server demo: a service checks in by name in one process,
// a client in another looks it up and talks to it (Scripts/demo.sh runs both).
import Glibc
import Harbor
import HarborBootstrap

/// Checks `name` in, answers each request (upper-cased text, same id) until
/// a message with id 0 arrives, and says what it saw.
func runBootstrapService(name: String) throws {
    let bootstrap = try BootstrapClient()
    let inbox = try bootstrap.checkIn(name)
    show("  service | checked in \(name) through \(bootstrap.socketPath) (pid \(getpid()))")
    var answered = 0
    while true {
        var request = try inbox.receive()
        if request.id == 0 { break }
        let quiet = answered >= 3 && request.id != bootstrapPingID
        if !quiet {
            let kind = request.id == bootstrapPingID ? "ping" : "id \(request.id)"
            let reply = request.hasReplyRight ? ", replying" : " (no reply right)"
            show("  service | \(kind) \(request.text.debugDescription) from pid \(request.trailer.sender.pid)\(reply)")
        }
        if request.hasReplyRight {
            let answer = request.id == bootstrapPingID
                ? Message(id: request.id, body: request.body)
                : Message(id: request.id, text: request.text.uppercased())
            try? request.reply(answer, timeout: .seconds(1))
            answered += 1
        }
    }
    show("  service | got goodbye after \(answered) replies; exiting (harbord takes \(name) back)")
}

/// Looks `name` up, sends three requests and prints the replies, then times
/// `requests` round trips.
func runBootstrapClient(name: String, requests: Int) throws {
    let bootstrap = try BootstrapClient()
    let start = MonotonicClock.nanoseconds()
    let service = try bootstrap.lookUp(name)
    show("  client  | looked up \(name) in \(microseconds(MonotonicClock.nanoseconds() - start)) (pid \(getpid()))")
    let replies = ReceiveRight()
    for (index, word) in ["hello", "from", "another process"].enumerated() {
        var request = Message(id: Int32(index + 1), text: word)
        request.setReplyRight(replies.makeSendOnceRight())
        try service.send(request, timeout: .seconds(5))
        let reply = try replies.receive(timeout: .seconds(5))
        show("  client  | sent \(word.debugDescription) → reply id \(reply.id) \(reply.text.debugDescription) "
              + "from pid \(reply.trailer.sender.pid)")
    }
    var samples: [Int64] = []
    samples.reserveCapacity(requests)
    for index in 0..<requests {
        var request = Message(id: Int32(10 + index))
        request.setReplyRight(replies.makeSendOnceRight())
        let begin = MonotonicClock.nanoseconds()
        try service.send(request, timeout: .seconds(5))
        _ = try replies.receive(timeout: .seconds(5))
        samples.append(MonotonicClock.nanoseconds() - begin)
    }
    samples.sort()
    show("  client  | \(requests) round trips to \(name) across processes: median \(microseconds(samples[samples.count / 2])), "
          + "p99 \(microseconds(samples[samples.count * 99 / 100]))")
}

/// Prints a line at once, even into a pipe, so two processes' lines interleave as they happen.
private func show(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
}
