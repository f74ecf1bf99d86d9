// Harbor — a distributed-actor call: a BenchEcho resolved by name, hosted by the peer process.
import Dispatch
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
        let batch = ActorBatch()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: onSystemThread ? system.taskExecutor : nil) {
            let data = [UInt8](repeating: 7, count: 64)
            do {
                for index in 0..<(warmUp + iterations) {
                    let started = nowNanoseconds()
                    let reply = try await remote.echo(EchoCall(sequence: index, data: data))
                    let elapsed = nowNanoseconds() - started
                    guard reply.sequence == index else { throw BenchmarkFailure("wrong reply") }
                    if index >= warmUp { batch.samples.append(elapsed) }
                }
            } catch {
                batch.failure = error
            }
            done.signal()
        }
        done.wait()
        if let failure = batch.failure { throw failure }
        samples.append(contentsOf: batch.samples)
    }

    func stop() {
        remote = nil
        system = nil
    }
}
