// Harbor fuzzing — the distributed actor the `actors` target calls.
import Distributed
import HarborDistributed

/// An actor whose functions take every Codable shape, an actor reference
/// and a thrown error; none of them traps on any argument, so any trap is
/// the system's.
distributed actor ActorsFuzzedActor {
    typealias ActorSystem = HarborActorSystem
    private var total = 0

    distributed func add(_ n: Int) -> Int {
        total &+= n
        return total
    }

    distributed func echo(_ text: String, _ bytes: [UInt8]) -> String { text + "\(bytes.count)" }

    distributed func shape(_ value: ActorsFuzzShape) -> Int { value.c.count &+ value.b.count &+ Int(value.a) }

    distributed func meet(_ other: ActorsFuzzedActor?) -> Bool { other != nil }

    distributed func refuse(_ n: Int) throws -> Int { throw ActorsFuzzError(n: n) }

    distributed func nothing() {}

    distributed func same<Value: Codable & Sendable>(_ value: Value) -> Value { value }
}

/// A value of several Codable shapes.
struct ActorsFuzzShape: Codable, Sendable {
    var a: Int8
    var b: [String: Double]
    var c: [Int?]
    var d: Bool?
}

/// The error `refuse` throws.
struct ActorsFuzzError: Error, Codable {
    var n: Int
}
