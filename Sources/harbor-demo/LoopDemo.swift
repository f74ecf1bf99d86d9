// Harbor — the demo's run-loop part: a worker thread kept alive by its loop,
// a port source and a repeating timer on it, work posted from outside, and a
// clean stop.
import Dispatch
import Harbor
import Synchronization
import HarborSystem

/// Runs a worker thread whose loop serves a port and a timer, prints what
/// happens, then stops the worker for real.
func runLoopDemo() throws {
    print("harbor-demo: a run loop on a worker thread")
    let worker = LoopWorker(name: "demo.worker")
    let handled = DispatchSemaphore(value: 0)
    let events = DemoLog()
    let log = events.record

    // A port source: the loop sleeps in epoll_wait until a message arrives.
    let source = try PortSource(ReceiveRight()) { message in
        log("port source got id \(message.id) \"\(message.text)\" (seq \(message.trailer.sequenceNumber))")
        handled.signal()
    }
    worker.loop.add(source, forMode: .default)
    let inbox = source.makeSendRight()

    // A repeating timer on the same loop, on a fixed 20 ms grid.
    let ticks = Atomic(0)
    let ticked = DispatchSemaphore(value: 0)
    let timer = LoopTimer(after: .milliseconds(20), repeating: .milliseconds(20), label: "demo.tick") { timer in
        let count = ticks.add(1, ordering: .relaxed).newValue
        log("timer tick \(count)")
        if count == 3 {
            timer.invalidate()
            ticked.signal()
        }
    }
    worker.loop.add(timer, forMode: .default)

    print(worker.loop.description.split(separator: "\n").map { "  | " + $0 }.joined(separator: "\n"))

    for (index, word) in ["hello", "from", "main"].enumerated() {
        try inbox.send(Message(id: Int32(index + 1), text: word))
        handled.wait()
    }
    ticked.wait()
    try worker.performAndWait { log("a block posted from the main thread ran on the worker") }

    for line in events.lines { print("  " + line) }
    worker.stop()
    print("  worker stopped: its loop returned, its thread exited, its descriptors are closed "
          + "(isStopped: \(worker.isStopped))")
}

/// Lines recorded from any thread, printed later in order.
final class DemoLog: Sendable {
    private let entries = HarborLock<[String]>([])
    @Sendable func record(_ line: String) { entries.withLock { $0.append(line) } }
    var lines: [String] { entries.withLock { $0 } }
}
