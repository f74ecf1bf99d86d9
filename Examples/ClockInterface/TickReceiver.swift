// Examples — the subscriber side of the distributed-actor clock.
import Distributed
import HarborDistributed

/// A subscriber's actor: the clock calls ``tick(_:)`` on it each second.
/// It lives in the subscriber's process and reaches the clock as an
/// argument (a send right to its port).
public distributed actor TickReceiver {
    public typealias ActorSystem = HarborActorSystem
    private let onTick: @Sendable (ClockTime) -> Void

    /// A receiver that hands each tick to `onTick`.
    public init(actorSystem: HarborActorSystem, onTick: @escaping @Sendable (ClockTime) -> Void) {
        self.actorSystem = actorSystem
        self.onTick = onTick
    }

    /// One tick, from the clock.
    public distributed func tick(_ time: ClockTime) { onTick(time) }
}
