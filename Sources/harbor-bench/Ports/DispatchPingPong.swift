// Harbor — Dispatch's ways: two serial queues bouncing asyncs, and async + semaphore.
import Dispatch

/// Two serial queues: the client queue's block sends an async to the server
/// queue, whose block sends an async back. The natural Dispatch ping-pong;
/// each round trip is timed from the client block that sends to the one that
/// receives the answer.
final class DispatchChainPingPong: BenchmarkVariant {
    let name = "dispatch-chain"
    let label = "serial queue A async→ serial queue B async→ A"

    /// @unchecked: every field is touched only by blocks on `client`, a
    /// serial queue, and each such block happens after the previous one
    /// (it is enqueued by a block that the previous one enqueued).
    final class Chain: @unchecked Sendable {
        let client = DispatchQueue(label: "harbor-bench.client")
        let server = DispatchQueue(label: "harbor-bench.server")
        let finished = DispatchSemaphore(value: 0)
        var remaining = 0
        var warmUp = 0
        var started: Int64 = 0
        var samples: [Int64] = []

        func send() {
            started = nowNanoseconds()
            server.async { self.client.async { self.replied() } }
        }

        func replied() {
            let elapsed = nowNanoseconds() - started
            if warmUp > 0 { warmUp -= 1 } else { samples.append(elapsed) }
            remaining -= 1
            if remaining == 0 { finished.signal() } else { send() }
        }
    }

    private let chain = Chain()

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let chain = self.chain
        chain.client.sync {
            chain.remaining = warmUp + iterations
            chain.warmUp = warmUp
            chain.samples = []
            chain.samples.reserveCapacity(iterations)
        }
        chain.client.async { chain.send() }
        chain.finished.wait()
        samples.append(contentsOf: chain.client.sync { chain.samples })
    }

    func stop() {}
}

/// A client thread that blocks: `server.async { semaphore.signal() }`, then
/// `semaphore.wait()`. The blocking request/reply shape, done with Dispatch.
final class DispatchSemaphorePingPong: BenchmarkVariant {
    let name = "dispatch-semaphore"
    let label = "client thread: serial queue async { signal }, semaphore.wait()"
    private let queue = DispatchQueue(label: "harbor-bench.server")
    private let semaphore = DispatchSemaphore(value: 0)

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let semaphore = self.semaphore
        measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            queue.async { semaphore.signal() }
            semaphore.wait()
        }
    }

    func stop() {}
}
