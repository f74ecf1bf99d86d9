// Harbor — a typed call: XPCSession.sendSync of a Codable request, answered by an XPCListener in the peer.
import HarborBootstrap
import HarborXPC

/// `XPCSession(machService:).sendSync(EchoCall)` and `decode(as:)` of the
/// reply, against the peer's `XPCListener` (`InterfacePeer`).
final class XPCTypedCall: BenchmarkVariant {
    let name = "xpc"
    let label = "XPCSession.sendSync(Codable) + decode(as:), XPCListener in the peer"
    private let socketPath: String
    /// The private harbord (kept running while a variant uses it).
    private let fixture: BootstrapFixture
    private var session: XPCSession?
    private let data = [UInt8](repeating: 7, count: 64)

    init(socketPath: String, fixture: BootstrapFixture) {
        self.socketPath = socketPath
        self.fixture = fixture
    }

    func start() throws {
        session = try XPCSession(machService: InterfacePeer.xpcName, bootstrap: try BootstrapClient(socketPath: socketPath))
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let session else { throw BenchmarkFailure("measure before start") }
        var sequence = 0
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            sequence += 1
            let reply = try session.sendSync(EchoCall(sequence: sequence, data: data)).decode(as: EchoCall.self)
            guard reply.sequence == sequence, reply.data.count == data.count else { throw BenchmarkFailure("wrong reply") }
        }
    }

    func stop() {
        session?.cancel(reason: "done")
        session = nil
    }
}
