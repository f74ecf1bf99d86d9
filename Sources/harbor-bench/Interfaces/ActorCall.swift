// Harbor — a distributed-actor call: a BenchEcho resolved by name, hosted by the peer process.
import HarborBootstrap
import HarborDistributed

/// `try await remote.echo(EchoCall)` on a `BenchEcho` the peer serves
/// (`HarborActorSystem.resolve(name:as:)`). The calls run in one task; each
/// sample times one `await`, and this thread waits for the task's batch.
/// `onSystemThread`: the task prefers the client system's thread
/// (`HarborActorSystem.taskExecutor`), so each answer resumes it there.
final class ActorCall: BenchmarkVariant {
    let name: String
    let label: String
    private let onSystemThread: Bool
    private let socketPath: String
    /// The private harbord (kept running while a variant uses it).
    private let fixture: BootstrapFixture
    private var system: HarborActorSystem?
    private var remote: BenchEcho?

    init(socketPath: String, fixture: BootstrapFixture, onSystemThread: Bool = false) {
        self.socketPath = socketPath
        self.fixture = fixture
        self.onSystemThread = onSystemThread
        name = onSystemThread ? "actor-system" : "actor"
        label = onSystemThread
            ? "distributed actor call, the caller on the system's thread (taskExecutor)"
            : "distributed actor call, HarborActorSystem, actor in the peer"
    }

    func start() throws {
        let system = try HarborActorSystem(bootstrap: try BootstrapClient(socketPath: socketPath))
        remote = try system.resolve(name: InterfacePeer.actorName, as: BenchEcho.self)
        self.system = system
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let remote, let system else { throw BenchmarkFailure("measure before start") }
        let data = [UInt8](repeating: 7, count: 64)
        try ActorBatch.measure(iterations: iterations, warmUp: warmUp,
                               executor: onSystemThread ? system.taskExecutor : nil, into: &samples) { index in
            let reply = try await remote.echo(EchoCall(sequence: index, data: data))
            guard reply.sequence == index else { throw BenchmarkFailure("wrong reply") }
        }
    }

    func stop() {
        remote = nil
        system = nil
    }
}
