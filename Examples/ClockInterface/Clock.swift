// Examples — the clock service as a distributed actor.
import Distributed
import HarborDistributed

/// The clock as a Swift distributed actor (`clock-actor-service` serves it
/// by name; `clock-actor-client` resolves it from another process).
public distributed actor Clock {
    public typealias ActorSystem = HarborActorSystem

    /// A clock served by `actorSystem`.
    public init(actorSystem: HarborActorSystem) {
        self.actorSystem = actorSystem
    }

    /// The time now.
    public distributed func now() -> ClockTime { .current() }

    /// The time once `seconds` have passed (at most an hour).
    public distributed func alarm(seconds: Int) async throws -> ClockTime {
        try await Task.sleep(for: .seconds(min(max(seconds, 0), 3600)))
        return .current()
    }

    /// Calls `receiver.tick(_:)` each second until a call fails: until the
    /// receiver's process goes away (or releases it).
    public distributed func subscribe(_ receiver: TickReceiver) {
        Task {
            while true {
                try await Task.sleep(for: .seconds(1))
                do {
                    try await receiver.tick(.current())
                } catch {
                    return      // the subscriber is gone: its calls fail (deadActor)
                }
            }
        }
    }
}
