// Harbor — Harbor's loops posting blocks to each other across two threads.
import Dispatch
import Harbor
import Synchronization
import HarborSystem

/// The server thread runs its `Loop`; the client either runs its own loop
/// until the reply block arrives (`bothLoops`), or blocks in
/// `performAndWait` (`blockingClient`).
final class HarborPerformPingPong: BenchmarkVariant {
    enum Style {
        /// Client and server both run a loop and `perform` to each other.
        case bothLoops
        /// The client blocks in `performAndWait`; only the server has a loop.
        case blockingClient
    }

    /// Flags shared by the client and the blocks it posts.
    final class Flags: Sendable {
        let replied = Atomic(false)
        let stopServer = Atomic(false)
        let serverLoop = HarborLock<Loop?>(nil)
    }

    let name: String
    let label: String
    private let style: Style
    private let server: SharedServerThread
    private let flags = Flags()
    private var keepAlive: LoopSource?

    init(_ style: Style, server: SharedServerThread) {
        self.style = style
        self.server = server
        switch style {
        case .bothLoops:
            name = "harbor-perform"
            label = "Loop.perform each way, both sides run their Loop"
        case .blockingClient:
            name = "harbor-performAndWait"
            label = "client blocks in server.performAndWait {}"
        }
    }

    func start() throws {
        if case .bothLoops = style {
            // A loop with nothing in its mode returns at once: keep the client's alive.
            let source = LoopSource(label: "bench client keep-alive") {}
            Loop.current.add(source, forMode: .default)
            keepAlive = source
        }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let flags = self.flags
        let ready = DispatchSemaphore(value: 0)
        server.thread.start {
            let loop = Loop.current
            let keepAlive = LoopSource(label: "bench server keep-alive") {}
            loop.add(keepAlive, forMode: .default)
            flags.stopServer.store(false, ordering: .relaxed)
            flags.serverLoop.withLock { $0 = loop }
            ready.signal()
            while !flags.stopServer.load(ordering: .relaxed) { _ = loop.run(mode: .default, before: nil) }
            loop.remove(keepAlive, forMode: .default)
        }
        ready.wait()
        guard let serverLoop = flags.serverLoop.withLock({ $0 }) else { throw BenchmarkFailure("no server loop") }
        switch style {
        case .bothLoops:
            let client = Loop.current
            measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
                flags.replied.store(false, ordering: .relaxed)
                serverLoop.perform {
                    client.perform { flags.replied.store(true, ordering: .relaxed) }
                }
                while !flags.replied.load(ordering: .relaxed) { _ = client.run(mode: .default, before: nil) }
            }
        case .blockingClient:
            try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
                try serverLoop.performAndWait {}
            }
        }
        serverLoop.perform { flags.stopServer.store(true, ordering: .relaxed) }
        server.thread.waitUntilIdle()
    }

    func stop() {
        if let keepAlive {
            Loop.current.remove(keepAlive, forMode: .default)
            self.keepAlive = nil
        }
    }
}
