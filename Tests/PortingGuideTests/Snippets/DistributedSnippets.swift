// Harbor — the Swift that Docs/Distributed.md and HarborDistributed's DocC
// catalog show, compiled (not run: the behaviour is HarborDistributedTests').
// snippet: distributed-overview
import Distributed
import HarborDistributed

distributed actor Counter {
    typealias ActorSystem = HarborActorSystem
    var total = 0

    distributed func add(_ n: Int) throws -> Int {
        guard n >= 0 else { throw CounterError.negative(n) }
        total += n
        return total
    }
}

enum CounterError: Error, Codable { case negative(Int) }
// end snippet
// snippet: distributed-docc-overview
import Distributed
import HarborDistributed
// end snippet

extension GuideSnippetSources {
    static func distributedOverview() async throws {
        // snippet: distributed-overview

        // The service's process: host the actor, serve it under a harbord name.
        let system = try HarborActorSystem()
        let counter = Counter(actorSystem: system)
        try system.serve(counter, as: "com.example.counter")

        // Another process: resolve the name, call the actor.
        let client = try HarborActorSystem()
        client.registerErrorType(CounterError.self)        // rethrown as itself
        let remote = try client.resolve(name: "com.example.counter", as: Counter.self)
        let total = try await remote.add(2)                // one message, one answer
        // end snippet
        _ = total
    }

    static func distributedDoccOverview() async throws {
        // snippet: distributed-docc-overview

        // The service.
        let system = try HarborActorSystem()
        try system.serve(Counter(actorSystem: system), as: "com.example.counter")

        // A client, in another process.
        let client = try HarborActorSystem()
        let counter = try client.resolve(name: "com.example.counter", as: Counter.self)
        do {
            print(try await counter.add(2))
        } catch let error as HarborActorSystemError where error.code == .deadActor {
            print("the service died: \(error.detail)")
        }
        // end snippet
    }
}
