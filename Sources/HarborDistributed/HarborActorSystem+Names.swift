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

    /// Serves the local `actor` on the harbord name `name` by checking the
    /// name in (`BootstrapClient.checkIn`): the name's port, with every
    /// call that waited in harbord for it, becomes another port of the
    /// actor, and this system runs the calls arriving there (the waiting
    /// ones first, in the order they were sent) as calls to the actor.
    ///
    /// This is the way to serve other uids: a name the policy declares
    /// `shared NAME owner=UID` is visible to every uid, and only `UID` checks
    /// it in. It is a call of its own, not what ``serve(_:as:)`` does,
    /// because Darwin keeps the two apart: launchd gives a name declared in
    /// a plist's `MachServices` to its service by `bootstrap_check_in` (the
    /// service receives on launchd's port, messages sent before it started
    /// included), while `bootstrap_register` publishes a port the caller
    /// made. Which one a name needs is the policy's decision, not the
    /// actor's; a name nobody declared is declared now, in the caller's
    /// scope, and goes when ``unserve(_:)`` gives it back.
    ///
    /// Each call is charged to its sender's uid (``runningCallsPerUid``):
    /// a call that waited in harbord arrives relayed by harbord, whose word
    /// on the real sender this process trusts (`Docs/Security.md`), so it
    /// is charged to that sender, never to harbord. The system holds the
    /// actor until ``unserve(_:)``.
    /// - Throws: ``HarborActorSystemError/Code/serveFailed`` (the name is
    ///   held by a live process, registered, another uid's shared name,
    ///   invalid, over quota, or harbord cannot be reached),
    ///   ``HarborActorSystemError/Code/actorNotFound`` for an actor not
    ///   hosted by this system.
    public func checkIn<Act: DistributedActor>(_ actor: Act, as name: String) throws(HarborActorSystemError)
        where Act.ID == HarborActorID
    {
        guard actor.id.right == nil, state.withLock({ $0.hosted[actor.id.port]?.actor != nil }) else {
            throw HarborActorSystemError(.actorNotFound, "\(actor.id) is not an actor of this system")
        }
        let port: PortBox
        do {
            port = PortBox(try bootstrap().checkIn(name))
        } catch {
            throw HarborActorSystemError(.serveFailed, "checking \(name) in: \(error)")
        }
        // harbord raised the limit to hold the calls that waited: keep them.
        try? port.right.setQueueLimit(max(Self.actorQueueLimit, port.right.status.queuedMessages))
        let added = state.withLock { state -> Bool in
            guard !state.stopped, state.checkedIn[name] == nil, var entry = state.hosted[actor.id.port],
                  let live = entry.actor else { return false }
            entry.strong = live
            entry.checkedInNames += 1
            state.hosted[actor.id.port] = entry
            state.checkedIn[name] = CheckedInName(port: port, actor: actor.id.port)
            state.aliases[port.name] = actor.id.port
            return true
        }
        guard added else {
            throw HarborActorSystemError(.serveFailed, "\(name) is checked in already, or the system stopped")
        }
        do {
            try ports.insert(port.right)
        } catch {
            _ = takeBack(name)
            throw HarborActorSystemError(.serveFailed, "no room for \(name)'s port in the system's port set: \(error)")
        }
    }

    /// Takes `name` back from harbord: a registered name is unregistered; a
    /// checked-in name's port is destroyed (calls queued on it fail with
    /// ``HarborActorSystemError/Code/deadActor`` at their callers), and a
    /// declared name goes back to waiting in harbord for the next check-in.
    /// The actor is let go of once no name and no send right holds it.
    /// - Throws: ``HarborActorSystemError/Code/serveFailed`` if harbord refuses.
    public func unserve(_ name: String) throws(HarborActorSystemError) {
        if takeBack(name) { return }
        do {
            try bootstrap().unregister(name)
        } catch {
            throw HarborActorSystemError(.serveFailed, "unregistering \(name): \(error)")
        }
    }

    /// Gives a checked-in name's port up; `false` if `name` is not checked in here.
    private func takeBack(_ name: String) -> Bool {
        let taken = state.withLock { state -> (port: PortBox, dropped: (any DistributedActor)?)? in
            guard let checked = state.checkedIn.removeValue(forKey: name) else { return nil }
            state.aliases[checked.port.name] = nil
            guard var entry = state.hosted[checked.actor] else { return (checked.port, nil) }
            entry.checkedInNames -= 1
            var dropped: (any DistributedActor)?
            if entry.checkedInNames == 0, entry.port.right.status.sendRights == 0 {
                dropped = entry.strong
                entry.strong = nil
            }
            state.hosted[checked.actor] = entry
            return (checked.port, dropped)
        }
        guard let taken else { return false }
        ports.remove(taken.port.right)
        _ = taken       // the port, and the actor if nothing else holds it, go here, outside the lock
        return true
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
