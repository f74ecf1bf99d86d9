// Harbor — the distributed actor the interface-call benchmark calls in the peer process.
import Distributed
import HarborDistributed

/// Echoes its argument: one distributed call, one typed argument, one typed
/// result. Hosted by the peer process, resolved by name in the client.
distributed actor BenchEcho {
    typealias ActorSystem = HarborActorSystem

    init(actorSystem: HarborActorSystem) {
        self.actorSystem = actorSystem
    }

    distributed func echo(_ call: EchoCall) -> EchoCall { call }
}
