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
    private let bootstrap: BootstrapClient
    private let requirement: XPCPeerRequirement?
    /// How long a connect waits for the listener's answer; nil: no deadline.
    private let connectTimeout: Duration?
    private let cancellationHandler: (@Sendable (XPCRichError) -> Void)?
    /// Where the reply and cancellation handlers run.
    /// Where the handlers run: replies, cancellation, subscriptions' events.
    let runner: HandlerRunner
    private let state = HarborLock(SessionState())
    private let monitor: SessionMonitor
    /// The session's reply port: numbered calls' replies come here.
    private let replyPort = ReceiveRight()
    /// A right to ``replyPort`` that wakes the call receiving on it.
    private let replyWake: SendRight

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
        /// Whether a caller is receiving on the reply port for all of them.
        var receiving = false
    }

    /// A numbered call: its connection, its outcome once known, and the
    /// parker its caller sleeps on while another caller receives.
    struct PendingCall: Sendable {
        let generation: UInt64
        var outcome: Result<MessageContent, XPCRichError>?
        var parker: Parker?
    }

    /// What a waiting caller does next.
    private enum Step: Sendable {
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
    ///     handler on its call's thread, the cancellation handler on the
    ///     cancelling one, an event handler on a serial queue of its
    ///     subscription's own).
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
    /// `send(_:replyHandler:)`); the call waits on a thread of its own.
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
        let encoded: Result<HarborPorts.Message, XPCRichError>
        do { encoded = .success(try Self.encode(message, id: XPCWire.call)) } catch { encoded = .failure(error) }
        let box = MessageBox(encoded)
        do {
            try SystemThread.spawn { [self] in
                let result = Result { () throws(XPCRichError) -> Reply in
                    try self.call(box.take()).decode(as: Reply.self)
                }.mapError { $0 as any Error }
                runner.run { replyHandler(result) }
            }.detach()
        } catch {
            let failure = XPCRichError(.connectionInvalid, "no thread for the call: \(error)")
            runner.post { replyHandler(.failure(failure)) }
        }
    }

    /// Sends `message` and returns its reply decoded as `Reply`: the async
    /// form of ``send(_:replyHandler:)``. It resumes from the call's own
    /// thread, whatever the session's target.
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

    private func end(_ error: XPCRichError, notify: Bool) {
        let ended = state.withLock { state -> (SendRight?, [SendRight], [Parker], Bool)? in
            guard state.cancelled == nil else { return nil }
            state.cancelled = error
            defer { state.right = nil; state.pending = [:] }
            let parkers = Self.fail(&state.calls, with: error) { _ in true }
            return (state.right, Array(state.pending.values), parkers, state.receiving)
        }
        guard let (right, pending, parkers, receiving) = ended else { return }
        try? right?.send(Message(id: XPCWire.cancel), timeout: .zero)
        for wake in pending { try? wake.send(Message(id: XPCWire.wake), timeout: .zero) }
        wakeCallers(parkers, receiving: receiving)
        monitor.stop()
        if notify, let cancellationHandler { runner.post { cancellationHandler(error) } }
    }

    // MARK: The connection

    /// The session's right, opening the session (again) if it has none.
    private func currentRight() throws(XPCRichError) -> (SendRight, UInt64) {
        let current = state.withLock { state -> Result<(SendRight, UInt64)?, XPCRichError> in
            if let cancelled = state.cancelled { return .failure(cancelled) }
            return .success(state.right.map { ($0, state.generation) })
        }
        if let current = try current.get() { return current }
        let (right, servicePID) = try connect()
        right.requestDeadNameNotification(to: monitor.port.makeSendOnceRight())
        let installed = state.withLock { state -> Result<(SendRight, UInt64), XPCRichError> in
            if let cancelled = state.cancelled { return .failure(cancelled) }
            if let existing = state.right { return .success((existing, state.generation)) }  // another thread won
            state.generation &+= 1
            state.right = right
            state.servicePID = servicePID
            return .success((right, state.generation))
        }
        let result = try installed.get()
        if result.0 != right { try? right.send(Message(id: XPCWire.cancel), timeout: .zero) }
        return result
    }

    /// Looks the name up and asks its listener for a session, handing it a
    /// send right to the session's reply port; the session's right and the
    /// process that accepted it.
    private func connect() throws(XPCRichError) -> (SendRight, Int32) {
        let service: SendRight
        do {
            service = try bootstrap.lookUp(self.service)
        } catch {
            throw XPCRichError(.serviceNotFound, "look-up of \(self.service): \(error)")
        }
        var reply: Message
        var request = Message(id: XPCWire.connect)
        request.attach(replyPort.makeSendRight())
        let answers = answerPort()
        request.setReplyRight(answers.makeSendOnceRight())
        do {
            reply = try service.sendAndReceive(request, replyPort: answers, timeout: connectTimeout)
        } catch where error.code == .timedOut {
            // The request's reply right dies with its port: a listener that
            // answers later finds no client and lets the session go.
            throw XPCRichError(.connectTimedOut, "\(self.service) did not answer the session request within "
                               + "\(connectTimeout.map { "\($0)" } ?? "its timeout")")
        } catch {
            throw XPCRichError(.connectionInterrupted, "\(self.service) is gone: \(error.code)")
        }
        try check(reply)
        switch reply.id {
        case XPCWire.accepted:
            guard reply.carriedRights.count == 1, let right = try? reply.takeSendRight(at: 0) else {
                throw XPCRichError(.protocolViolation, "the acceptance carries no session right")
            }
            return (right, reply.trailer.sender.pid)
        case XPCWire.rejected:
            throw XPCRichError(.sessionRejected, XPCWire.reason(reply.text))
        default:
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a session request")
        }
    }

    /// A port for one answer: it reads each sender's cgroup as the answer
    /// arrives when the requirement names a cgroup or unit (X22).
    private func answerPort() -> ReceiveRight {
        let port = ReceiveRight()
        if requirement?.needsCgroup == true { port.readSenderCgroups() }
        return port
    }

    /// Refuses a notification, a failure, or an answer whose sender fails
    /// the requirement: its cgroup as read when the answer arrived, through
    /// the pidfd the kernel took when it was sent, never by its pid later.
    private func check(_ reply: borrowing Message) throws(XPCRichError) {
        if reply.notification != nil {
            throw XPCRichError(.connectionInterrupted, "\(service) died (or dropped the request) before answering")
        }
        if reply.id == XPCWire.failure {
            throw Self.failure(reply.text)
        }
        do throws(XPCRichError) {
            try requirement?.check(reply.trailer)
        } catch {
            let refusal = XPCRichError(error.code, "the service: \(error.reason)")
            end(refusal, notify: true)
            throw refusal
        }
    }

    // MARK: Numbered calls

    /// One call: a number, sent at the end of the request's body; its reply
    /// comes to the session's reply port with the same number.
    func call(_ request: consuming Message) throws(XPCRichError) -> XPCReceivedMessage {
        let (right, generation, number) = try register()
        XPCWire.append(number, to: &request)
        do {
            try right.send(request)
        } catch {
            _ = state.withLock { $0.calls.removeValue(forKey: number) }
            interrupted(generation: generation)
            throw XPCRichError(.connectionInterrupted, "\(service) is gone: \(error.code)")
        }
        let reply = Message(content: try awaitReply(number))
        try check(reply)
        guard reply.id == XPCWire.reply else {
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a request")
        }
        return XPCReceivedMessage(reply)
    }

    /// The session's right, its connection's generation, and a new call
    /// number registered as pending on that connection.
    private func register() throws(XPCRichError) -> (SendRight, UInt64, UInt64) {
        while true {
            let registered = state.withLock { state -> Result<(SendRight, UInt64, UInt64)?, XPCRichError> in
                if let cancelled = state.cancelled { return .failure(cancelled) }
                guard let right = state.right else { return .success(nil) }
                state.nextCall &+= 1
                state.calls[state.nextCall] = PendingCall(generation: state.generation)
                return .success((right, state.generation, state.nextCall))
            }
            if let registered = try registered.get() { return registered }
            _ = try currentRight()
        }
    }

    /// Waits for call `number`'s outcome: receives on the reply port for
    /// every pending call while no other caller does, else sleeps until the
    /// receiving caller hands it its reply or the receiving over.
    private func awaitReply(_ number: UInt64) throws(XPCRichError) -> MessageContent {
        while true {
            let step = state.withLock { state -> Step in
                guard let call = state.calls[number] else {
                    return .done(.failure(state.cancelled ?? XPCRichError(.connectionInterrupted, "the call was lost")))
                }
                if let outcome = call.outcome {
                    state.calls[number] = nil
                    return .done(outcome)
                }
                if !state.receiving {
                    state.receiving = true
                    return .receive
                }
                let parker = call.parker ?? Parker()
                state.calls[number]?.parker = parker
                return .park(parker)
            }
            switch step {
            case .done(let outcome): return try outcome.get()
            case .park(let parker): _ = parker.park(until: .never)
            case .receive: receiveReply(for: number)
            }
        }
    }

    /// Receives one message on the reply port and hands it to its call: a
    /// numbered reply or failure from the connection's service to a call
    /// still waiting; anything else (a stale, unknown or duplicate number, a
    /// wake-up, another sender) is dropped. Gives the receiving up, to a
    /// parked caller if `me` is done.
    private func receiveReply(for me: UInt64) {
        var failed: XPCRichError?
        var delivery: (number: UInt64, sender: Int32, content: MessageContent)?
        do throws(PortError) {
            delivery = Self.numbered(try replyPort.receive())
        } catch {
            failed = XPCRichError(.connectionInterrupted, "the reply port failed: \(error.code)")
        }
        let (parkers, dropped) = state.withLock { state -> ([Parker], MessageContent?) in
            state.receiving = false
            var parkers: [Parker] = []
            var dropped: MessageContent?
            if let failed { state.calls[me]?.outcome = .failure(failed) }
            if let (number, sender, content) = delivery {
                if sender == state.servicePID, var call = state.calls[number], call.outcome == nil {
                    call.outcome = .success(content)
                    state.calls[number] = call
                    if number != me, let parker = call.parker { parkers.append(parker) }
                } else {
                    dropped = content
                }
            }
            if state.calls[me]?.outcome != nil,
               let next = state.calls.values.first(where: { $0.outcome == nil && $0.parker != nil })?.parker {
                parkers.append(next)
            }
            return (parkers, dropped)
        }
        if let dropped { _ = Message(content: dropped) }  // released with its rights
        for parker in parkers { parker.unpark() }
    }

    /// A numbered reply or failure's number, sender and content (the number
    /// taken off its body); nil for anything else.
    private static func numbered(_ message: consuming Message) -> (number: UInt64, sender: Int32, content: MessageContent)? {
        guard message.notification == nil, message.id == XPCWire.reply || message.id == XPCWire.failure,
              let number = XPCWire.takeNumber(from: &message) else { return nil }
        let sender = message.trailer.sender.pid
        return (number, sender, message.takeContent())
    }

    /// Fails every call `which` picks that has no outcome yet; the parkers
    /// of their callers.
    private static func fail(_ calls: inout [UInt64: PendingCall], with error: XPCRichError,
                             which: (PendingCall) -> Bool) -> [Parker] {
        var parkers: [Parker] = []
        for (number, call) in calls where call.outcome == nil && which(call) {
            calls[number]?.outcome = .failure(error)
            if let parker = call.parker { parkers.append(parker) }
        }
        return parkers
    }

    /// Wakes callers whose calls failed, and the one receiving, if any.
    private func wakeCallers(_ parkers: [Parker], receiving: Bool) {
        for parker in parkers { parker.unpark() }
        if receiving { try? replyWake.send(Message(id: XPCWire.wake), timeout: .zero) }
    }

    /// A call through a reply port of its own, a send-once right to it in
    /// the request: a subscription, whose request carries rights the
    /// publisher takes.
    func callThroughOwnPort(_ request: consuming Message) throws(XPCRichError) -> XPCReceivedMessage {
        let (right, generation) = try currentRight()
        let replyPort = answerPort()
        let registered = state.withLock { state -> Result<UInt64, XPCRichError> in
            if let cancelled = state.cancelled { return .failure(cancelled) }
            state.nextCall &+= 1
            state.pending[state.nextCall] = replyPort.makeSendRight()
            return .success(state.nextCall)
        }
        let call = try registered.get()
        defer { _ = state.withLock { $0.pending.removeValue(forKey: call) } }
        request.setReplyRight(replyPort.makeSendOnceRight())
        do {
            try right.send(request)
        } catch {
            interrupted(generation: generation)
            throw XPCRichError(.connectionInterrupted, "\(service) is gone: \(error.code)")
        }
        let reply: Message
        do {
            reply = try replyPort.receive()
        } catch {
            throw XPCRichError(.connectionInterrupted, "the reply port failed: \(error.code)")
        }
        if reply.id == XPCWire.wake, reply.notification == nil,
           reply.trailer.sender.pid == ProcessIdentity.current.pid {
            let cancelled = state.withLock { $0.cancelled }
            throw cancelled ?? XPCRichError(.connectionInterrupted, "\(service) died with the call pending")
        }
        if reply.notification != nil { interrupted(generation: generation) }
        try check(reply)
        guard reply.id == XPCWire.reply else {
            throw XPCRichError(.protocolViolation, "unexpected answer \(reply.id) to a request")
        }
        return XPCReceivedMessage(reply)
    }

    /// The service died: forget its right (the next call looks the name up
    /// again) and fail every pending call of that connection.
    private func interrupted(generation: UInt64) {
        let interruption = XPCRichError(.connectionInterrupted, "\(service) died with the call pending")
        let (pending, parkers, receiving) = state.withLock { state -> ([SendRight], [Parker], Bool) in
            guard state.generation == generation, state.right != nil else { return ([], [], false) }
            state.right = nil
            let parkers = Self.fail(&state.calls, with: interruption) { $0.generation == generation }
            return (Array(state.pending.values), parkers, state.receiving)
        }
        for wake in pending { try? wake.send(Message(id: XPCWire.wake), timeout: .zero) }
        wakeCallers(parkers, receiving: receiving)
    }

    /// A dead-name notification about `name`, from the monitor's thread.
    private func interrupted(ifRightIs name: PortName) {
        let generation = state.withLock { state -> UInt64? in
            state.right?.name == name ? state.generation : nil
        }
        if let generation { interrupted(generation: generation) }
    }

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
