// HarborDistributed — Swift distributed actors over Harbor ports.
import Distributed
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem

/// A `DistributedActorSystem` whose actors are Harbor ports: across
/// threads, between systems in one process, and across processes, with
/// harbord names to find them by.
///
/// ```swift
/// distributed actor Counter {
///     typealias ActorSystem = HarborActorSystem
///     var total = 0
///     distributed func add(_ n: Int) throws(CounterError) -> Int { … }
/// }
///
/// // the service's process
/// let system = try HarborActorSystem()
/// let counter = Counter(actorSystem: system)
/// try system.serve(counter, as: "com.example.counter")
///
/// // another process
/// let system = try HarborActorSystem()
/// let counter = try system.resolve(name: "com.example.counter", as: Counter.self)
/// let total = try await counter.add(2)                 // one message, one answer
/// ```
///
/// **Identity.** An actor's ID (``HarborActorID``) is its port. The system
/// that hosts the actor holds the receive right; a remote reference holds
/// a send right. Passing an actor as an argument or result sends a send
/// right to its port (`HarborCoding` carries it).
///
/// **Calls.** Each call is one message to the actor's port: the target's
/// name and the arguments (`HarborCoding`). The first call to a port
/// carries a send-once right to a reply port of the call's own; its answer
/// names the serving process, and later calls go by number: the system
/// keeps one reply port per serving process, hands that process a send
/// right to it once per actor port, and each call carries a number its
/// answer comes back with (`Docs/Distributed.md`, D08). The hosting
/// system's thread receives a call and runs the function on the actor, in
/// a task that prefers that thread as its executor; the answer (the value,
/// the return, the thrown error, or a system failure) goes back the way
/// the call asked. A call is delivered **at most once**: it is never
/// resent, and a call whose actor died while it was pending may or may
/// not have run.
///
/// **Cancellation.** When the task waiting for a call is cancelled, the
/// caller's system tells the actor's, which cancels the task running the
/// call (the function sees `Task.isCancelled`); the call still answers
/// once: with its result, or ``HarborActorSystemError/Code/cancelled`` when
/// the function threw `CancellationError`. Only the calling process can
/// cancel its calls.
///
/// **Generics and protocols.** A generic distributed function's
/// substitutions are taken only as the canonical mangled names of
/// `Codable` types the serving process has, one per generic parameter
/// (``HarborActorSystemError/Code/invalidSubstitution`` otherwise). A call
/// through a `@Resolvable` protocol's `$Protocol` stub runs the hosted
/// actor's own function.
///
/// **Death is a notification, never a timeout.** When the actor's process
/// dies, the reply right of every call pending in it dies unanswered (a
/// send-once notification), and the actor's port becomes a dead name (a
/// dead-name notification, for calls by number): the call throws
/// ``HarborActorSystemError/Code/deadActor`` at once. The next call finds
/// the port dead when it sends and throws the same.
///
/// **Other uids.** ``serve(_:as:)`` registers the name, in the caller's
/// own uid's namespace. For other uids, the policy declares the name
/// (`shared NAME owner=UID`) and its owner serves the actor with
/// ``checkIn(_:as:)``: calls sent to the name before then wait in harbord
/// and are served after the check-in, each charged to its real sender.
///
/// **Release.** A local actor is held weakly until a send right to it
/// leaves this system (``serve(_:as:)``, ``exportedID(of:)``, or passing it
/// in a call); from then on the system holds it strongly, until its port's
/// no-senders notification says the last send right anywhere is gone. An
/// actor with a name checked in is held until ``unserve(_:)``.
///
/// **Errors.** Failures of the system are ``HarborActorSystemError``. An
/// error the remote function throws is rethrown as itself when it is
/// `Codable` and its type was given to ``registerErrorType(_:)`` (the
/// answer names the type; the caller decodes only types it registered, so
/// a peer cannot make it decode an arbitrary type); otherwise it arrives as
/// ``HarborActorSystemError/Code/remoteError`` with the type's name and
/// the error's description. A `HarborActorSystemError` the remote function
/// throws (a call it made failed) arrives with its code.
///
/// **Whoever asks pays.** Each call runs in a task of the hosting system
/// until it answers: one caller uid keeps at most
/// ``runningCallsPerUid`` calls running at once, and all callers
/// ``runningCallLimit``. A call past its uid's share is answered at once
/// with ``HarborActorSystemError/Code/busy`` and does not run; other
/// callers are still served.
///
/// One thread per system receives every actor's calls and every call's
/// answer (one port set), and runs the calls it receives until they
/// suspend or answer: a distributed function that computes for long
/// without suspending delays the system's other calls meanwhile. The
/// system runs until ``shutdown()``.
///
/// **Thread safety:** any thread.
public final class HarborActorSystem: DistributedActorSystem, Sendable {
    /// The actors' IDs: their ports.
    public typealias ActorID = HarborActorID
    /// Records a call's arguments.
    public typealias InvocationEncoder = HarborInvocationEncoder
    /// Reads a received call's arguments.
    public typealias InvocationDecoder = HarborInvocationDecoder
    /// Answers a received call.
    public typealias ResultHandler = HarborResultHandler
    /// Arguments, results and thrown errors are `Codable` (`HarborCoding`).
    public typealias SerializationRequirement = any Codable

    /// The most calls an actor's port queues before callers wait.
    public static let actorQueueLimit = 64

    /// The most calls one caller uid keeps running in this system at once
    /// (the kernel-verified sender uid of the call's message). A call past
    /// it, or past ``runningCallLimit``, is answered at once with
    /// ``HarborActorSystemError/Code/busy`` and does not run; a call's
    /// share is given back when its answer is sent (`Docs/Distributed.md`).
    public static let runningCallsPerUid = 64
    /// The most calls all callers together keep running in this system.
    public static let runningCallLimit = 1024

    /// The most caller links (D08) one uid keeps in this system: each is
    /// the send right to one calling system's reply port, kept until that
    /// port dies. An introducing call past its uid's share, or past
    /// ``callerLinkLimit``, is answered at once with
    /// ``HarborActorSystemError/Code/busy`` and does not run; the caller's
    /// later calls to the actor go with a send-once reply right each.
    public static let callerLinksPerUid = 64
    /// The most caller links all callers together keep in this system.
    public static let callerLinkLimit = 1024
    /// The most calls by number one link keeps waiting (its reply port's
    /// queue limit, so every answer finds room); more go with a send-once
    /// reply right each.
    static let numberedCallsPerLink = 1024
    /// The most remote actor ports a system remembers a route for; a port
    /// past it is called with a send-once reply right each time.
    static let routeLimit = 4096

    let state: HarborLock<SystemState>
    /// Every actor's port and every pending call's reply port.
    let ports: PortSet
    /// Where no-senders notifications, and the stop message, arrive (in `ports`).
    let notifications: ReceiveRight
    /// The system's thread, as the executor the calls it receives run on.
    let executor: SystemExecutor
    /// The calls each caller uid keeps running here (whoever asks pays).
    let runningCalls = UidShares(perUid: HarborActorSystem.runningCallsPerUid, total: HarborActorSystem.runningCallLimit)

    /// The system's receiving thread as a task executor, for callers that
    /// want a remote call's answer to resume them where it arrives:
    /// `await withTaskExecutorPreference(system.taskExecutor) { … }` (or
    /// `Task(executorPreference:)`) runs the code on that thread, and each
    /// answer resumes it there, with no hand-off to another thread (a call
    /// then costs about what the raw round trip does, `Benchmarks.md`,
    /// interface-call). The code holds the thread while it runs: calls this
    /// system serves, and answers to other callers' calls, wait meanwhile,
    /// so it should await rather than block, and do little between calls.
    /// Without a preference, an answer resumes its caller on the concurrency
    /// pool.
    public var taskExecutor: any TaskExecutor { executor }

    /// Whether the calling code runs on the system's receiving thread (for
    /// tests and assertions: code that prefers ``taskExecutor`` does).
    package var isOnSystemThread: Bool { executor.isCurrent }

    /// The calls `uid` keeps running in this system now (its share in use).
    package func runningCallCount(for uid: UInt32) -> Int { runningCalls.held(by: uid) }

    /// The caller links each uid keeps in this system (D08).
    let callerLinks = UidShares(perUid: HarborActorSystem.callerLinksPerUid, total: HarborActorSystem.callerLinkLimit)

    /// The caller links `uid` keeps in this system now.
    package func callerLinkCount(for uid: UInt32) -> Int { callerLinks.held(by: uid) }

    /// What every caller of this system's actors must be, as the kernel
    /// reports the sender of each call (D12); `nil`: anyone who holds a
    /// send right to an actor's port. A call from a process that does not
    /// meet it is answered ``HarborActorSystemError/Code/callerRefused``
    /// and does not run.
    public let callerRequirement: HarborCallerRequirement?

    /// A system with its receiving thread.
    /// - Parameters:
    ///   - bootstrap: the name server for ``serve(_:as:)`` and
    ///     ``resolve(name:as:)``; `nil` connects as `BootstrapClient()` does,
    ///     when first needed.
    ///   - callerRequirement: what every caller of the system's actors must
    ///     be (``callerRequirement``); `nil` for anyone.
    /// - Throws: ``HarborActorSystemError/Code/systemShutDown`` when no
    ///   port set or thread can be made.
    public init(bootstrap: BootstrapClient? = nil,
                callerRequirement: HarborCallerRequirement? = nil) throws(HarborActorSystemError) {
        self.callerRequirement = callerRequirement
        var initial = SystemState()
        initial.bootstrap = bootstrap
        state = HarborLock(initial)
        do {
            ports = try PortSet()
        } catch {
            throw HarborActorSystemError(.systemShutDown, "no port set for the system: \(error)")
        }
        let port = ReceiveRight()
        try? port.setQueueLimit(1024)
        let waker = port.makeSendRight()
        executor = SystemExecutor {
            // A full queue holds messages that wake the thread anyway.
            try? waker.send(Message(id: ActorWire.wake), timeout: .zero)
        }
        notifications = port
        do {
            try ports.insert(notifications)
            try SystemThread.spawn { [self] in run() }.detach()
        } catch {
            throw HarborActorSystemError(.systemShutDown, "no thread for the system: \(error)")
        }
    }

    /// The `userInfo` every coder of this system gets: the system, under
    /// `CodingUserInfoKey.actorSystemKey`, so actor references code. Made
    /// once and kept until ``shutdown()`` (it holds the system, as the
    /// system's thread does until then).
    var codingUserInfo: [CodingUserInfoKey: any Sendable] {
        state.withLock { state in
            if let kept = state.codingUserInfo { return kept }
            let userInfo: [CodingUserInfoKey: any Sendable] = [.actorSystemKey: self]
            if !state.stopped { state.codingUserInfo = userInfo }
            return userInfo
        }
    }

    // MARK: Identity

    /// A new port for a new local actor of type `actorType`.
    public func assignID<Act: DistributedActor>(_ actorType: Act.Type) -> HarborActorID where Act.ID == HarborActorID {
        let port = PortBox(ReceiveRight())
        // A system shut down hosts nothing: the port is destroyed with the
        // box, and calls to the actor find it dead.
        guard !state.withLock({ $0.stopped }) else { return HarborActorID(local: port.name) }
        try? port.right.setQueueLimit(Self.actorQueueLimit)
        // A port outside the set is never received from: its callers wait,
        // as on a stopped service. Only descriptor exhaustion does that.
        try? ports.insert(port.right)
        state.withLock { $0.hosted[port.name] = HostedActor(port: port) }
        return HarborActorID(local: port.name)
    }

    /// Records the initialised actor (weakly) and asks for its port's
    /// no-senders notifications.
    public func actorReady<Act: DistributedActor>(_ actor: Act) where Act.ID == HarborActorID {
        let port = state.withLock { state -> PortBox? in
            guard var entry = state.hosted[actor.id.port] else { return nil }
            entry.actor = actor
            entry.targetPrefix = _mangledTypeName(Act.self).map { "$s" + $0 }
            state.hosted[actor.id.port] = entry
            return entry.port
        }
        port?.right.requestNoSendersNotification(to: notifications.makeSendOnceRight())
    }

    /// Forgets a local actor that deinitialised and destroys its port:
    /// remote references become dead names, and calls queued on it fail
    /// with ``HarborActorSystemError/Code/deadActor`` at their callers.
    /// Names checked in for it are given back to harbord (their ports are
    /// destroyed; harbord makes each a new port to wait on).
    public func resignID(_ id: HarborActorID) {
        let (port, names) = state.withLock { state -> (PortBox?, [CheckedInName]) in
            let names = state.checkedIn.filter { $0.value.actor == id.port }
            for (name, checked) in names {
                state.checkedIn[name] = nil
                state.aliases[checked.port.name] = nil
            }
            return (state.hosted.removeValue(forKey: id.port)?.port, Array(names.values))
        }
        for checked in names { ports.remove(checked.port.right) }
        guard let port else { return }
        ports.remove(port.right)
    }

    /// The local actor `id` names, or `nil` for a remote one (the runtime
    /// then makes a remote reference).
    /// - Throws: ``HarborActorSystemError/Code/deadActor`` for a local
    ///   actor that is gone, ``HarborActorSystemError/Code/actorNotFound``
    ///   for an ID without a right that names no actor here, or for a
    ///   local actor of another type.
    public func resolve<Act: DistributedActor>(id: HarborActorID, as actorType: Act.Type) throws -> Act?
        where Act.ID == HarborActorID
    {
        let hosted = state.withLock { state -> (found: Bool, actor: (any DistributedActor)?) in
            guard let entry = state.hosted[id.port] else { return (false, nil) }
            return (true, entry.actor)
        }
        if hosted.found {
            guard let actor = hosted.actor else {
                throw HarborActorSystemError(.deadActor, "\(id) was released")
            }
            guard let typed = actor as? Act else {
                throw HarborActorSystemError(.actorNotFound, "\(id) is a \(type(of: actor)), not a \(Act.self)")
            }
            return typed
        }
        guard id.right != nil else {
            throw HarborActorSystemError(.actorNotFound, "\(id) is no actor of this system, and the ID holds no right to it")
        }
        return nil
    }

    /// Makes an invocation encoder for one call.
    public func makeInvocationEncoder() -> HarborInvocationEncoder { HarborInvocationEncoder() }

    // MARK: Exporting

    /// A send right to the local actor's port, holding the actor strongly
    /// from now until its port's no-senders notification; `nil` when no
    /// live actor of this system has that port.
    func exportRight(for port: PortName) -> SendRight? {
        state.withLock { state -> SendRight? in
            guard var entry = state.hosted[port], let actor = entry.actor else { return nil }
            entry.strong = actor
            state.hosted[port] = entry
            return entry.port.right.makeSendRight()
        }
    }

    /// An ID of the local `actor` that holds a send right to it: what
    /// another system (in this process, or one it is sent to) resolves to
    /// reach it. The system holds the actor until the last such right goes.
    /// - Throws: ``HarborActorSystemError/Code/actorNotFound`` if the actor
    ///   is not this system's.
    public func exportedID<Act: DistributedActor>(of actor: Act) throws(HarborActorSystemError) -> HarborActorID
        where Act.ID == HarborActorID
    {
        if actor.id.right != nil { return actor.id }
        guard let right = exportRight(for: actor.id.port) else {
            throw HarborActorSystemError(.actorNotFound, "\(actor.id) is not an actor of this system")
        }
        return HarborActorID(right: right)
    }

    /// Registers `type` so that a remote function throwing it is rethrown
    /// here as itself (decoded from the answer), not as
    /// ``HarborActorSystemError/Code/remoteError``. Typed `throws(E)` needs
    /// it too: Swift 6.3 gives the system `any Error` as a distributed
    /// function's error type whatever it declares (a concrete `E`, were
    /// the runtime to pass one, is used without registration).
    public func registerErrorType<E: Error & Codable>(_ type: E.Type) {
        let name = _mangledTypeName(E.self) ?? _typeName(E.self)
        state.withLock { $0.errorTypes[name] = ErrorRebuilder(E.self) }
    }

    /// Stops the system: its thread ends, pending calls throw
    /// ``HarborActorSystemError/Code/systemShutDown``, the ports of its
    /// local actors, and of the names checked in for them, are destroyed
    /// (remote references become dead names)
    /// and it lets go of every actor it held. Later calls throw
    /// ``HarborActorSystemError/Code/systemShutDown``.
    public func shutdown() {
        let (pending, hosted, names, numbered, links) = state.withLock { state
            -> ([PendingCall], [HostedActor], [CheckedInName], [NumberedCall], [ReplyLink]) in
            guard !state.stopped else { return ([], [], [], [], []) }
            state.stopped = true
            defer {
                state.pending = [:]; state.hosted = [:]; state.checkedIn = [:]; state.aliases = [:]
                state.numbered = [:]; state.links = [:]; state.linkPorts = [:]; state.routes = [:]
                state.callers = [:]; state.callerPorts = [:]; state.codingUserInfo = nil
            }
            return (Array(state.pending.values), Array(state.hosted.values), Array(state.checkedIn.values),
                    Array(state.numbered.values), Array(state.links.values))
        }
        for call in pending {
            call.continuation.resume(throwing: HarborActorSystemError(.systemShutDown, "the system was shut down"))
        }
        for call in numbered {
            call.continuation.resume(throwing: HarborActorSystemError(.systemShutDown, "the system was shut down"))
        }
        for link in links { ports.remove(link.port.right) }
        for entry in hosted { ports.remove(entry.port.right) }
        for checked in names { ports.remove(checked.port.right) }
        try? notifications.makeSendRight().send(Message(id: ActorWire.stop), timeout: .zero)
        _ = hosted
    }
}
