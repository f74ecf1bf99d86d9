// HarborDistributedProbe — a @Resolvable protocol ProbeCounter serves.
import Distributed
import HarborDistributed

/// What a caller that knows only the protocol calls (D10): it resolves a
/// `$ProbeCounting` stub, not a ``ProbeCounter``.
@Resolvable
public protocol ProbeCounting: DistributedActor where ActorSystem == HarborActorSystem {
    /// Adds `n`; the new total.
    distributed func add(_ n: Int) -> Int
    /// Returns `value` (a generic requirement).
    distributed func echo<Value: Codable & Sendable>(_ value: Value) -> Value
}

extension ProbeCounter: ProbeCounting {}
