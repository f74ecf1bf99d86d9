// HarborDistributed — actors under harbord names.
import Distributed
import HarborBootstrap
import HarborPorts

extension HarborActorSystem {
    /// Publishes the local `actor` with harbord as `name` (registering a
    /// send right to its port), so other processes can
    /// ``resolve(name:as:)`` it. The system holds the actor while the name
    /// stands; ``unserve(_:)`` takes it back.
    /// - Throws: ``HarborActorSystemError/Code/serveFailed`` (the name is
    ///   taken, invalid, over quota, or harbord cannot be reached),
    ///   ``HarborActorSystemError/Code/actorNotFound`` for an actor not
    ///   hosted by this system.
    public func serve<Act: DistributedActor>(_ actor: Act, as name: String) throws(HarborActorSystemError)
        where Act.ID == HarborActorID
    {
        guard let right = exportRight(for: actor.id.port), actor.id.right == nil else {
            throw HarborActorSystemError(.actorNotFound, "\(actor.id) is not an actor of this system")
        }
        do {
            try bootstrap().register(name, right)
        } catch {
            throw HarborActorSystemError(.serveFailed, "registering \(name): \(error)")
        }
    }

    /// Takes `name` back from harbord.
    /// - Throws: ``HarborActorSystemError/Code/serveFailed`` if harbord refuses.
    public func unserve(_ name: String) throws(HarborActorSystemError) {
        do {
            try bootstrap().unregister(name)
        } catch {
            throw HarborActorSystemError(.serveFailed, "unregistering \(name): \(error)")
        }
    }

    /// The actor served as `name`: looked up with harbord, then resolved
    /// (the local actor if this system hosts it, else a remote reference).
    /// - Throws: ``HarborActorSystemError/Code/actorNotFound`` when harbord
    ///   has no such name or cannot be reached; what `Act.resolve` throws.
    public func resolve<Act: DistributedActor>(name: String, as actorType: Act.Type) throws -> Act
        where Act.ID == HarborActorID, Act.ActorSystem == HarborActorSystem
    {
        let right: SendRight
        do {
            right = try bootstrap().lookUp(name)
        } catch {
            throw HarborActorSystemError(.actorNotFound, "looking \(name) up: \(error)")
        }
        return try Act.resolve(id: HarborActorID(right: right), using: self)
    }

    /// The name server client, connecting the first time.
    func bootstrap() throws(BootstrapError) -> BootstrapClient {
        if let client = state.withLock({ $0.bootstrap }) { return client }
        let client = try BootstrapClient()
        return state.withLock { state in
            if let existing = state.bootstrap { return existing }
            state.bootstrap = client
            return client
        }
    }
}
