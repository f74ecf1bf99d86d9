// HarborDistributed tests — calls through a @Resolvable protocol's stub (D10).
import Distributed
import HarborCoding
import HarborDistributed
import HarborDistributedProbe
import HarborPorts
import HarborTestSupport
import Testing

/// A distributed protocol: callers hold `$Greeter` stubs, not the actor's type.
@Resolvable
protocol Greeter: DistributedActor where ActorSystem == HarborActorSystem {
    distributed func greet(_ name: String) -> String
    distributed func greetings() -> Int
}

/// The actor that serves `Greeter`.
distributed actor EnglishGreeter: Greeter {
    typealias ActorSystem = HarborActorSystem
    private var count = 0

    distributed func greet(_ name: String) -> String {
        count += 1
        return "hello \(name)"
    }

    distributed func greetings() -> Int { count }
}

extension DistributedTests {
    @Suite struct Resolvable {
        /// D10: a caller that knows only a `@Resolvable` protocol calls the
        /// actor through its `$Protocol` stub, between two systems and
        /// across processes (a generic requirement too); an actor that does
        /// not conform to the protocol refuses the stub's functions
        /// `unknownTarget` and serves on.
        @Test func D10_callsThroughAResolvableProtocolsStubReachTheHostedActor() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let greeter = EnglishGreeter(actorSystem: host)
            let stub = try $Greeter.resolve(id: try host.exportedID(of: greeter), using: caller)
            #expect(__isRemoteActor(stub))
            #expect(try await stub.greet("you") == "hello you")
            #expect(try await stub.greet("me") == "hello me")
            #expect(try await stub.greetings() == 2)
            #expect(try await greeter.greetings() == 2, "the calls ran on the hosted actor")

            // A stub's function aimed at an actor that is no Greeter.
            let counter = ProbeCounter(actorSystem: host)
            let counterID = try host.exportedID(of: counter)
            let wrong = try $Greeter.resolve(id: counterID, using: caller)
            #expect(await actorCode { _ = try await wrong.greet("x") } == .unknownTarget)
            let counting = try $ProbeCounting.resolve(id: counterID, using: caller)
            #expect(try await counting.add(3) == 3, "the actor served on")

            let harbord = PrivateHarbord()
            let probe = harbord.serve("com.example.d10")
            defer { withExtendedLifetime(probe) {} }
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let remote = try system.resolve(name: "com.example.d10", as: $ProbeCounting.self)
            #expect(try await remote.add(4) == 4)
            #expect(try await remote.add(1) == 5)
            #expect(try await remote.echo(["a": 1]) == ["a": 1])
            let concrete = try system.resolve(name: "com.example.d10", as: ProbeCounter.self)
            #expect(try await concrete.add(0) == 5, "the stub's calls ran on the probe's ProbeCounter")
        }
    }
}
