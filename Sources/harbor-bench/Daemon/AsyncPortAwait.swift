// Harbor — benchmark: awaiting a port message (A01) vs a run-loop port source (RL09), as request/reply round trips.
import Glibc
import Harbor
import Synchronization

/// A request and its reply between the client (main thread, blocking in
/// `receive()` on its reply port) and a server that answers each request
/// either from a run-loop port source or from a task awaiting the port's
/// `PortMessages` sequence. The floor is the eventfd/epoll ping-pong.
struct AsyncPortAwait: Benchmark {
    let name = "async-port-await"
    let summary = "server answers from `for try await` on a port vs from a run-loop PortSource"
    let unit = "round trip"
    let iterations = (full: 1000, quick: 300)
    let notes = [
        "floor: eventfd + epoll ping-pong between the main thread and one server thread (as in cross-thread-round-trip).",
        "harbor-portsource: the server is a LoopWorker whose PortSource handler sends the reply.",
        "harbor-async: the server is a task iterating `for try await` over the port's PortMessages; while it "
            + "waits, the port sits in the shared harbor.async-ports loop, which resumes the task on the "
            + "concurrency pool: one extra thread hop per request compared with the port source.",
        "client (all harbor variants): send, then block in ReceiveRight.receive() on its reply port.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let server = try SharedServerThread(name: "bench-server")
        return [EventfdPingPong(server: server), PortSourceServer(), AsyncAwaitServer()]
    }
}

/// The client side both Harbor variants share.
private func clientRoundTrips(
    to server: SendRight, replies: borrowing ReceiveRight, iterations: Int, warmUp: Int, into samples: inout [Int64]
) throws {
    try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
        try server.send(Message(id: 1))
        _ = try replies.receive()
    }
}

final class PortSourceServer: BenchmarkVariant {
    let name = "harbor-portsource"
    let label = "LoopWorker + PortSource handler replies"
    private var worker: LoopWorker?
    private var source: PortSource?
    private let replies = ReceiveRight()

    func start() throws {
        let worker = LoopWorker(name: "bench-portsource")
        let back = replies.makeSendRight()
        let source = try PortSource(ReceiveRight()) { _ in _ = try? back.send(Message(id: 2)) }
        worker.loop.add(source, forMode: .default)
        self.worker = worker
        self.source = source
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let source else { throw BenchmarkFailure("not started") }
        try clientRoundTrips(to: source.makeSendRight(), replies: replies, iterations: iterations, warmUp: warmUp, into: &samples)
    }

    func stop() {
        source?.invalidate()
        worker?.stop()
    }
}

final class AsyncAwaitServer: BenchmarkVariant {
    let name = "harbor-async"
    let label = "Task: for try await message in port.messages() { reply }"
    private var serving: Task<Void, any Error>?
    private var server: SendRight?
    private let replies = ReceiveRight()

    func start() throws {
        let messages = try ReceiveRight().messages()
        server = messages.makeSendRight()
        let back = replies.makeSendRight()
        serving = Task.detached {
            for try await _ in messages { try back.send(Message(id: 2)) }
        }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let server else { throw BenchmarkFailure("not started") }
        try clientRoundTrips(to: server, replies: replies, iterations: iterations, warmUp: warmUp, into: &samples)
    }

    func stop() { serving?.cancel() }
}
