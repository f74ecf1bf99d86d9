// HarborXPC — a client's session with a named service.
import Dispatch
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem

/// A client's session with a service a listener serves, XPC's `XPCSession`.
///
/// ```swift
/// let session = try XPCSession(machService: "com.example.clock")
/// try session.send(Tick())                                   // one-way
/// let now: Now = try session.sendSync(Ask()).decode(as: Now.self)
/// session.send(Ask()) { (result: Result<Now, any Error>) in … }
/// let later: Now = try await session.send(Ask())
/// session.cancel(reason: "done")
/// ```
///
/// The session is one port pair: the listener made a port for it and handed
/// this session the only send right to it, so its state and its end are the
/// session's own; the session made one reply port and handed the listener a
/// send right to it at connect. Each call that waits for a reply carries a
/// number, never reused within the session, and its reply comes back with
/// it, so a reply can never answer another call (a stale or unknown number
/// is dropped).
///
/// **Death is exact, never a timeout.** When the service dies, this
/// session's right becomes a dead name (a dead-name notification, which the
/// session asked for at connect): every pending call throws
/// ``XPCRichError/Code/connectionInterrupted`` within one round trip of the
/// kernel closing the service's descriptors. The session then looks the
/// name up again on its next call, so it goes to the name's next instance
/// (XPC's reconnect after an interruption).
///
/// **Thread safety:** any thread; calls from several threads run concurrently.
public final class XPCSession: Sendable {
    /// The name the session looks up.
    public let service: String
    let bootstrap: BootstrapClient
    let requirement: XPCPeerRequirement?
    /// How long a connect waits for the listener's answer; nil: no deadline.
    let connectTimeout: Duration?
    let cancellationHandler: (@Sendable (XPCRichError) -> Void)?
    /// Where the handlers run: replies, cancellation, subscriptions' events.
    let runner: HandlerRunner
    let state = HarborLock(SessionState())
    let monitor: SessionMonitor
    /// The session's reply port: numbered calls' replies come here.
    let replyPort = ReceiveRight()
    /// A right to ``replyPort`` that wakes the call receiving on it.
    let replyWake: SendRight
    /// Where calls no thread waits for wait for room in a full queue, in order.
    let sendQueue: DispatchQueue
    /// Where the session's reply thread sleeps while no call needs it
    /// (XPCSession+Calls.swift, `ensureReceiving`).
    let replyThreadParker = Parker()

    struct SessionState: Sendable {
        var right: SendRight?
        var generation: UInt64 = 0
        /// The process that accepted the current connection: numbered
        /// replies from any other are dropped.
        var servicePID: Int32 = 0
        var cancelled: XPCRichError?
        var nextCall: UInt64 = 0
        /// Calls through a port of their own (subscriptions): a right to wake each.
        var pending: [UInt64: SendRight] = [:]
        /// Numbered calls not yet collected by their callers.
        var calls: [UInt64: PendingCall] = [:]
        /// Whether a caller (or the reply thread) is receiving on the reply
        /// port for all of them.
        var receiving = false
        /// How many of `calls` have a completion (no caller waits for them).
        var waitingCompletions = 0
        /// Whether the reply thread was started (it lives as long as the session).
        var replyThreadStarted = false
        /// Requests on `sendQueue` not yet sent (calls made meanwhile queue behind them).
        var sendsBehind = 0
    }

    /// What a call no thread waits for does with its outcome.
    typealias CallCompletion = @Sendable (Result<MessageContent, XPCRichError>) -> Void

    /// A numbered call: its connection, and either the caller's side (its
    /// outcome once known, the parker its caller sleeps on while another
    /// caller receives) or a completion, run with the outcome by whoever
    /// learns it.
    struct PendingCall: Sendable {
        let generation: UInt64
        var outcome: Result<MessageContent, XPCRichError>?
        var parker: Parker?
        var completion: CallCompletion?

        init(generation: UInt64, completion: CallCompletion? = nil) {
            self.generation = generation
            self.completion = completion
        }
    }

    /// What a waiting caller does next.
    enum Step: Sendable {
        case done(Result<MessageContent, XPCRichError>)
        case receive
        case park(Parker)
    }

    /// Looks `machService` up with harbord and opens a session with its listener.
    ///
    /// - Parameters:
    ///   - machService: the harbord name (XPC's Mach service name).
    ///   - target: where the reply handlers (``send(_:replyHandler:)``),
    ///     the cancellation handler and the event handlers of its
    ///     subscriptions (``XPCSubscription/setEventHandler(_:)``) run, one
    ///     at a time; ``XPCHandlerTarget/ownThread`` by default (a reply
    ///     handler on the thread that received its reply, the cancellation
    ///     handler on the cancelling one, an event handler on a serial
    ///     queue of its subscription's own).
    ///   - requirement: checked on the service's answers (the session's
    ///     acceptance and every reply), on the kernel's word about their
    ///     sender (a cgroup or unit: read through the pidfd the kernel took
    ///     when the answer was sent, as it arrives, X22): XPC's
    ///     `setPeerRequirement(_:)`. A reply that fails it
    ///     throws ``XPCRichError/Code/peerRequirementNotMet`` and cancels
    ///     the session.
    ///   - bootstrap: the name server client; `nil` connects as
    ///     `BootstrapClient()` does.
    ///   - connectTimeout: how long each connect (this one, and each after
    ///     an interruption) waits for the listener to answer; nil (the
    ///     default) waits without a deadline, as XPC does. A connect that
    ///     times out throws ``XPCRichError/Code/connectTimedOut``.
    ///   - cancellationHandler: called once, on `target`, when the session is
    ///     cancelled (``cancel(reason:)``, a requirement failed, or the listener ended it).
    /// - Throws: ``XPCRichError/Code/serviceNotFound`` (no such name),
    ///   ``XPCRichError/Code/connectTimedOut`` (no answer within `connectTimeout`),
    ///   ``XPCRichError/Code/sessionRejected`` (the listener rejected it),
    ///   ``XPCRichError/Code/peerRequirementNotMet`` (a requirement on
    ///   either side failed), ``XPCRichError/Code/connectionInterrupted``
    ///   (the service died while asked).
    public init(
        machService: String,
        target: XPCHandlerTarget = .ownThread,
        requirement: XPCPeerRequirement? = nil,
        bootstrap: BootstrapClient? = nil,
        connectTimeout: Duration? = nil,
        cancellationHandler: (@Sendable (XPCRichError) -> Void)? = nil
    ) throws(XPCRichError) {
        service = machService
        self.connectTimeout = connectTimeout
        runner = HandlerRunner(target, label: "XPCSession \(machService)")
        sendQueue = DispatchQueue(label: "XPCSession \(machService) sends")
        self.requirement = requirement
        self.cancellationHandler = cancellationHandler
        do {
            self.bootstrap = try bootstrap ?? BootstrapClient()
        } catch {
            throw XPCRichError(.serviceNotFound, "harbord: \(error)")
        }
        monitor = SessionMonitor()
        // Before any answer can arrive: a requirement on the service's
        // cgroup is checked on the cgroup read when each answer arrived.
        if requirement?.needsCgroup == true { replyPort.readSenderCgroups() }
        replyWake = replyPort.makeSendRight()
        let monitor = self.monitor
        do {
            try SystemThread.spawn { [weak self] in
                monitor.run { name in self?.interrupted(ifRightIs: name) }
            }.detach()
        } catch {
            throw XPCRichError(.connectionInvalid, "no thread for the session: \(error)")
        }
        _ = try currentRight()
    }

    /// Looks `machService` up and opens a session whose handlers run on
    /// `targetQueue`: XPC's `init(machService:targetQueue:…)`.
    ///
    /// - Parameters:
    ///   - targetQueue: the queue the reply, cancellation and subscription
    ///     event handlers run on (``XPCHandlerTarget/queue(_:)``), one at a time; `nil`:
    ///     ``XPCHandlerTarget/ownThread``.
    ///   - machService: the name to look up, as in
    ///     ``init(machService:target:requirement:bootstrap:connectTimeout:cancellationHandler:)``
    ///     (so are the parameters below).
    ///   - requirement: what the service must satisfy, checked on each reply.
    ///   - bootstrap: the name server to look the name up with.
    ///   - connectTimeout: the longest a connect may wait; `nil`, no deadline.
    ///   - cancellationHandler: runs once, when the session is cancelled.
    /// - Throws: what that initializer throws.
    public convenience init(
        machService: String,
        targetQueue: DispatchQueue?,
        requirement: XPCPeerRequirement? = nil,
        bootstrap: BootstrapClient? = nil,
        connectTimeout: Duration? = nil,
        cancellationHandler: (@Sendable (XPCRichError) -> Void)? = nil
    ) throws(XPCRichError) {
        try self.init(machService: machService, target: targetQueue.map { .queue($0) } ?? .ownThread,
                      requirement: requirement, bootstrap: bootstrap, connectTimeout: connectTimeout,
                      cancellationHandler: cancellationHandler)
    }

    deinit {
        end(XPCRichError(.connectionInvalid, "the session was released"), notify: false)
    }

    // MARK: Sending

    /// Sends `message` one-way (XPC's `send(_:)`).
    /// - Throws: ``XPCRichError/Code/codingFailed``, or
    ///   ``XPCRichError/Code/connectionInterrupted`` /
    ///   ``XPCRichError/Code/connectionInvalid`` if the session cannot send.
    public func send<Message: Encodable>(_ message: Message) throws(XPCRichError) {
        let encoded = try Self.encode(message, id: XPCWire.message)
        let (right, generation) = try currentRight()
        do {
            try right.send(encoded)
        } catch {
            interrupted(generation: generation)
            throw XPCRichError(.connectionInterrupted, "the service is gone: \(error.code)")
        }
    }

    /// Sends `message` and waits for its reply (XPC's `sendSync(_:)`).
    /// - Returns: the reply, to ``XPCReceivedMessage/decode(as:)``.
    /// - Throws: ``XPCRichError``: `connectionInterrupted` if the service
    ///   died (or its handler dropped the message unanswered),
    ///   `connectionInvalid` if the session was cancelled meanwhile,
    ///   `peerRequirementNotMet` if either side's requirement refused it,
    ///   `noReply`, `codingFailed`, or what the service answered.
    public func sendSync<Message: Encodable>(_ message: Message) throws(XPCRichError) -> XPCReceivedMessage {
        try call(Self.encode(message, id: XPCWire.call))
    }

    /// Sends `message` and calls `replyHandler` with its reply decoded as
    /// `Reply`, or the error, on the session's target (XPC's
    /// `send(_:replyHandler:)`), queued there in the order the replies come.
    /// No thread waits for the reply: a `sendSync` caller receiving for
    /// the session hands it over, or the session's reply thread (one per
    /// session, started by its first such call) receives it. With
    /// ``XPCHandlerTarget/ownThread`` the handler runs on the thread that
    /// received the reply, as a serial queue would run it: a handler must
    /// not wait for another reply handler of its session.
    public func send<Message: Encodable, Reply: Decodable & Sendable>(
        _ message: Message,
        replyHandler: @escaping @Sendable (Result<Reply, any Error>) -> Void
    ) {
        send(message, on: runner, replyHandler: replyHandler)
    }

    /// ``send(_:replyHandler:)`` with its handler run by `runner`.
    private func send<Message: Encodable, Reply: Decodable & Sendable>(
        _ message: Message, on runner: HandlerRunner,
        replyHandler: @escaping @Sendable (Result<Reply, any Error>) -> Void
    ) {
        let encoded: HarborPorts.Message
        do {
            encoded = try Self.encode(message, id: XPCWire.call)
        } catch {
            runner.post { replyHandler(.failure(error)) }
            return
        }
        call(encoded) { result in
            let decoded = Result { () throws(XPCRichError) -> Reply in
                try result.get().decode(as: Reply.self)
            }.mapError { $0 as any Error }
            runner.post { replyHandler(decoded) }
        }
    }

    /// Sends `message` and returns its reply decoded as `Reply`: the async
    /// form of ``send(_:replyHandler:)``, resumed by the thread that
    /// received the reply (or failed the call), whatever the session's
    /// target. No thread waits while the task is suspended.
    public func send<Message: Encodable, Reply: Decodable & Sendable>(_ message: Message) async throws -> Reply {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Reply, any Error>) in
            send(message, on: HandlerRunner(.ownThread, label: "")) { (result: Result<Reply, any Error>) in
                continuation.resume(with: result)
            }
        }
    }

    // MARK: Cancelling

    /// Cancels the session (XPC's `cancel(reason:)`): pending calls throw
    /// ``XPCRichError/Code/connectionInvalid``, the listener's side ends
    /// (its cancellation handler runs), and the cancellation handler runs
    /// once with `reason`: before this returns with
    /// ``XPCHandlerTarget/ownThread``, else queued on the target.
    public func cancel(reason: String) {
        end(XPCRichError(.connectionInvalid, "cancelled: \(reason)"), notify: true)
    }

    func end(_ error: XPCRichError, notify: Bool) {
        let ended = state.withLock { state -> (SendRight?, [SendRight], SessionWakes, Bool)? in
            guard state.cancelled == nil else { return nil }
            state.cancelled = error
            defer { state.right = nil; state.pending = [:] }
            var wakes = SessionWakes()
            wakes.fail(&state, with: error) { _ in true }
            return (state.right, Array(state.pending.values), wakes, state.receiving)
        }
        guard let (right, pending, wakes, receiving) = ended else { return }
        try? right?.send(Message(id: XPCWire.cancel), timeout: .zero)
        for wake in pending { try? wake.send(Message(id: XPCWire.wake), timeout: .zero) }
        wakeCallers(wakes, receiving: receiving)
        replyThreadParker.unpark()  // to see the session ended
        monitor.stop()
        if notify, let cancellationHandler { runner.post { cancellationHandler(error) } }
    }

    /// `value` coded (HarborCoding) as a message with `id`.
    static func encode(_ value: some Encodable, id: Int32) throws(XPCRichError) -> HarborPorts.Message {
        do {
            return try MessageEncoder().encode(value, id: id)
        } catch {
            throw XPCRichError(.codingFailed, "\(error)")
        }
    }

    /// A peer's `code TAB reason`, as the error it names.
    static func failure(_ text: String) -> XPCRichError {
        let parts = text.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
        let code = parts.first.flatMap { XPCRichError.Code(rawValue: String($0)) } ?? .protocolViolation
        return XPCRichError(code, XPCWire.reason(parts.count > 1 ? String(parts[1]) : text))
    }
}
