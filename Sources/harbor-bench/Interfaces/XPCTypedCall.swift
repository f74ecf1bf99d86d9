// Harbor — a typed call: XPCSession.sendSync (or the async send) of a Codable request, answered by an XPCListener in the peer.
import HarborBootstrap
import HarborXPC

/// `XPCSession(machService:).sendSync(EchoCall)` and `decode(as:)` of the
/// reply, against the peer's `XPCListener` (`InterfacePeer`). `isAsync`:
/// `try await session.send(EchoCall)` instead, the calls in one task on
/// the concurrency pool, each sample one `await`.
final class XPCTypedCall: BenchmarkVariant {
    let name: String
    let label: String
    private let isAsync: Bool
    private let socketPath: String
    /// The private harbord (kept running while a variant uses it).
    private let fixture: BootstrapFixture
    private var session: XPCSession?
    private let data = [UInt8](repeating: 7, count: 64)

    init(socketPath: String, fixture: BootstrapFixture, isAsync: Bool = false) {
        self.socketPath = socketPath
        self.fixture = fixture
        self.isAsync = isAsync
        name = isAsync ? "xpc-async" : "xpc"
        label = isAsync ? "try await XPCSession.send(Codable) -> Codable, XPCListener in the peer"
            : "XPCSession.sendSync(Codable) + decode(as:), XPCListener in the peer"
    }

    func start() throws {
        session = try XPCSession(machService: InterfacePeer.xpcName, bootstrap: try BootstrapClient(socketPath: socketPath))
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let session else { throw BenchmarkFailure("measure before start") }
        if isAsync { return try measureAsync(session, iterations: iterations, warmUp: warmUp, into: &samples) }
        var sequence = 0
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            sequence += 1
            let reply = try session.sendSync(EchoCall(sequence: sequence, data: data)).decode(as: EchoCall.self)
            guard reply.sequence == sequence, reply.data.count == data.count else { throw BenchmarkFailure("wrong reply") }
        }
    }

    /// The async form: one task runs the calls; this thread waits for it.
    private func measureAsync(_ session: XPCSession, iterations: Int, warmUp: Int,
                              into samples: inout [Int64]) throws {
        let data = self.data
        try ActorBatch.measure(iterations: iterations, warmUp: warmUp, into: &samples) { index in
            let reply: EchoCall = try await session.send(EchoCall(sequence: index, data: data))
            guard reply.sequence == index else { throw BenchmarkFailure("wrong reply") }
        }
    }

    func stop() {
        session?.cancel(reason: "done")
        session = nil
    }
}
