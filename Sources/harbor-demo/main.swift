// Harbor — the demo: two threads talk through ports, and we time the round trip.
//
// A server thread owns a receive right and answers each request through the
// send-once reply right the request carries (Mach's request/reply idiom).
// The main thread sends requests, reads replies, and reports what happened
// and how long a round trip took.
import Dispatch
import Glibc
import Harbor

/// Moves a receive right from the main thread to the server thread.
final class Handoff: @unchecked Sendable {
    // @unchecked: written once by the main thread before the server thread
    // starts, then taken once by the server thread; never touched concurrently.
    var port: ReceiveRight?
    init(_ port: consuming ReceiveRight) { self.port = .some(port) }
}

/// Answers every request with id+1 until it gets id 0; returns how many it answered.
func serve(_ port: borrowing ReceiveRight) -> Int {
    var served = 0
    while var request = try? port.receive() {
        if request.id == 0 { break }
        served += 1
        do { try request.reply(Message(id: request.id &+ 1, body: request.body)) } catch {
            print("  server: reply failed: \(error)")
        }
    }
    return served
}

func microseconds(_ nanoseconds: Int64) -> String {
    let tenths = (nanoseconds + 50) / 100
    return "\(tenths / 10).\(tenths % 10) µs"
}

func runDemo(requests: Int) throws {
    let serverPort = ReceiveRight()
    let server = serverPort.makeSendRight()
    let replyPort = ReceiveRight()
    print("harbor-demo: two threads, two ports")
    print("  server port \(serverPort.name) (on its own thread), reply port \(replyPort.name) (main thread)")

    let handoff = Handoff(serverPort)
    let serverDone = DispatchSemaphore(value: 0)
    Thread.detach {
        guard let port = handoff.port.take() else { return }
        let served = serve(port)
        print("  server thread: answered \(served) requests, then said goodbye")
        serverDone.signal()
    }

    // One request, shown in full.
    var first = Message(id: 41, text: "ping")
    first.setReplyRight(replyPort.makeSendOnceRight())
    try server.send(first)
    let answer = try replyPort.receive(timeout: .seconds(5))
    print("  sent id 41 \"ping\" → got id \(answer.id) \"\(answer.text)\" "
          + "(seq \(answer.trailer.sequenceNumber), from \(answer.trailer.sender))")

    // Many, timed one by one.
    var samples: [Int64] = []
    samples.reserveCapacity(requests)
    for index in 0..<requests {
        var request = Message(id: Int32(index * 2 + 1))
        request.setReplyRight(replyPort.makeSendOnceRight())
        let start = MonotonicClock.nanoseconds()
        try server.send(request)
        _ = try replyPort.receive()
        samples.append(MonotonicClock.nanoseconds() - start)
    }
    samples.sort()
    print("  \(requests) round trips: median \(microseconds(samples[samples.count / 2])), "
          + "p99 \(microseconds(samples[samples.count * 99 / 100])), min \(microseconds(samples[0]))")

    try server.send(Message(id: 0))
    serverDone.wait()
    let status = replyPort.status
    print("  reply port: \(status.sequenceNumber) replies received, \(status.queuedMessages) left waiting")
}

// `harbor-demo` (or `threads`): ports between threads, a run loop on a
// worker, an actor on a loop thread, and SIGTERM through a signal source.
// `service NAME` / `client NAME`: the name-server demo Scripts/demo.sh runs.
let arguments = Array(CommandLine.arguments.dropFirst())
switch (arguments.first, arguments.count) {
case ("service", 2):
    try runBootstrapService(name: arguments[1])
case ("client", 2):
    try runBootstrapClient(name: arguments[1], requests: 2_000)
case (nil, _), ("threads", 1):
    // SIGTERM is handled by a signal source on the main loop (signalfd), which
    // needs the signal blocked in every thread: block it before any thread starts.
    try prepareSignalDemo()
    try runDemo(requests: 20_000)
    try runLoopDemo()
    try runAsyncDemoAndWait()
    try runSignalDemo()
    print("harbor-demo: done")
default:
    print("usage: harbor-demo [threads | service NAME | client NAME]")
    exit(64)
}
