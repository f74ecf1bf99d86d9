// HarborXPC — a named service that accepts sessions.
import Dispatch
import HarborBootstrap
import HarborPorts
import HarborSystem

/// A service that checks a name in with harbord and accepts or rejects each
/// session a client asks for, XPC's `XPCListener`.
///
/// ```swift
/// let listener = try XPCListener(service: "com.example.clock",
///                                requirement: .isFromSameUser()) { request in
///     request.accept { message in
///         guard let ask = try? message.decode(as: Ask.self) else { return nil }
///         return Now(seconds: ask.offset + 42)
///     }
/// }
/// ```
///
/// Each accepted session gets a port of its own, and a thread that receives
/// its messages and runs its message handler one message at a time, on the
/// listener's ``XPCHandlerTarget`` (by default that thread itself; XPC's
/// serial target queue). The session request and each message are judged
/// on the kernel's word about their sender (`trailer.sender`), never on
/// anything in the message.
///
/// **Thread safety:** any thread.
public final class XPCListener: Sendable {
    /// The name the listener checked in.
    public let service: String
    private let port: Listening
    private let sessions = HarborLock<[PortName: SessionWake]>([:])
    private let cancelled = HarborLock(false)

    /// How long a numbered call's reply waits for room in a client's full
    /// reply port before the listener drops it and ends that session with
    /// ``XPCRichError/Code/replyTimedOut``, unless the listener's
    /// `replyTimeout:` says otherwise: 10 seconds, far beyond a client that
    /// reads (its reply port holds five replies), short enough that a
    /// client that stopped reading holds a thread only that long.
    public static let defaultReplyTimeout: Duration = .seconds(10)

    /// Checks `service` in and starts accepting sessions.
    ///
    /// - Parameters:
    ///   - service: the harbord name (Docs/Bootstrap.md).
    ///   - target: where the incoming-session handler and every accepted
    ///     session's message and cancellation handlers run (a session's
    ///     one at a time, in order); ``XPCHandlerTarget/ownThread`` by default.
    ///   - requirement: checked on the session request and on every message;
    ///     a message that fails it is refused and its sender's call throws
    ///     ``XPCRichError/Code/peerRequirementNotMet``.
    ///   - bootstrap: the name server client; `nil` connects to harbord as
    ///     `BootstrapClient()` does.
    ///   - interface: the interface the listener publishes
    ///     (``XPCInterface``, usually ``XPCMethodRouter/interface``): it
    ///     answers ``XPCInterface/introspect(_:bootstrap:timeout:)`` with it,
    ///     to any process `requirement` admits. `nil` publishes none.
    ///   - replyTimeout: how long a numbered call's reply (``XPCSession/sendSync(_:)``
    ///     and the other waiting forms) waits for room in the client's reply
    ///     port, full because the client stopped reading it; then the reply
    ///     is dropped and the session ends with
    ///     ``XPCRichError/Code/replyTimedOut`` (its cancellation handler runs),
    ///     so such a client cannot hold its session's thread.
    ///     ``defaultReplyTimeout`` by default.
    ///   - incomingSessionHandler: decides each session request, on `target`.
    /// - Throws: ``XPCRichError/Code/serviceNotFound`` if harbord cannot be
    ///   reached or refuses the check-in (the reason says why).
    public init(
        service: String,
        target: XPCHandlerTarget = .ownThread,
        requirement: XPCPeerRequirement? = nil,
        bootstrap: BootstrapClient? = nil,
        interface: XPCInterface? = nil,
        replyTimeout: Duration = XPCListener.defaultReplyTimeout,
        incomingSessionHandler: @escaping @Sendable (IncomingSessionRequest) -> IncomingSessionRequest.Decision
    ) throws(XPCRichError) {
        self.service = service
        do {
            let client = try bootstrap ?? BootstrapClient()
            port = Listening(try client.checkIn(service))
        } catch {
            throw XPCRichError(.serviceNotFound, "check-in of \(service) failed: \(error)")
        }
        // Before the listener's thread reads anything: from here on every
        // sender's cgroup is read through the pidfd of its message.
        if requirement?.needsCgroup == true { port.port.readSenderCgroups() }
        let port = self.port
        let owner = ListenerLoop(port: port, requirement: requirement, interface: interface, target: target,
                                 replyTimeout: replyTimeout, handler: incomingSessionHandler,
                                 adopt: { [weak self] name, wake in self?.adopt(name, wake) ?? false },
                                 ended: { [weak self] name in self?.ended(name) })
        do {
            try SystemThread.spawn { owner.run() }.detach()
        } catch {
            throw XPCRichError(.connectionInvalid, "no thread for the listener: \(error)")
        }
    }

    /// Checks `service` in and starts accepting sessions, its handlers run
    /// on `targetQueue`: XPC's `init(service:targetQueue:…)`.
    ///
    /// - Parameters:
    ///   - targetQueue: the queue the incoming-session handler and the
    ///     sessions' handlers run on (``XPCHandlerTarget/queue(_:)``), each
    ///     session serially; `nil` runs them on threads of their own
    ///     (``XPCHandlerTarget/ownThread``).
    ///   - service: the name to check in, as in
    ///     ``init(service:target:requirement:bootstrap:interface:replyTimeout:incomingSessionHandler:)``
    ///     (so are the parameters below; the reply timeout is ``defaultReplyTimeout``).
    ///   - requirement: what every peer must satisfy, checked on each message.
    ///   - bootstrap: the name server to check in with.
    ///   - interface: the interface the listener publishes, if any.
    ///   - incomingSessionHandler: decides each incoming session.
    /// - Throws: ``XPCRichError/Code/serviceNotFound`` if harbord cannot be
    ///   reached or refuses the check-in.
    public convenience init(
        service: String,
        targetQueue: DispatchQueue?,
        requirement: XPCPeerRequirement? = nil,
        bootstrap: BootstrapClient? = nil,
        interface: XPCInterface? = nil,
        incomingSessionHandler: @escaping @Sendable (IncomingSessionRequest) -> IncomingSessionRequest.Decision
    ) throws(XPCRichError) {
        try self.init(service: service, target: targetQueue.map { .queue($0) } ?? .ownThread, requirement: requirement,
                      bootstrap: bootstrap, interface: interface, incomingSessionHandler: incomingSessionHandler)
    }

    /// Stops accepting sessions and ends every session it accepted (their
    /// cancellation handlers run); the name goes with the listener's port.
    /// XPC's `cancel()`.
    public func cancel() {
        let first = cancelled.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        let wakes = sessions.withLock { table -> [SessionWake] in
            defer { table = [:] }
            return Array(table.values)
        }
        for wake in wakes { wake.fire() }
        try? port.wake.send(Message(id: XPCWire.wake), timeout: .zero)
    }

    deinit { cancel() }

    private func adopt(_ name: PortName, _ wake: SessionWake) -> Bool {
        let isCancelled = cancelled.withLock { $0 }
        if isCancelled { return false }
        sessions.withLock { $0[name] = wake }
        return true
    }

    private func ended(_ name: PortName) {
        _ = sessions.withLock { $0.removeValue(forKey: name) }
    }
}
