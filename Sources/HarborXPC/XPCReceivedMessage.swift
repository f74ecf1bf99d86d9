// HarborXPC — a message a session received: decode it, reply to it.
import HarborCoding
import HarborPorts
import HarborSystem

/// A message received on a session, XPC's `XPCReceivedMessage`: the listener's
/// message handler gets one per message, and ``XPCSession/sendSync(_:)``
/// returns the reply as one.
///
/// ```swift
/// request.accept { message in
///     let ping = try? message.decode(as: Ping.self)
///     return Pong(n: ping?.n ?? 0)          // the reply, when the sender waits for one
/// }
/// ```
///
/// Its body is decoded as hostile input (`Docs/Coding.md`): a malformed
/// body is a ``XPCRichError/Code/codingFailed`` error, never a trap.
///
/// **Thread safety:** any thread; ``reply(_:)`` answers at most once.
public final class XPCReceivedMessage: Sendable {
    /// The kernel's word on who sent the message (`trailer.sender`).
    public let sender: ProcessIdentity
    /// The runtime's facts on the message: ``sender`` and its cgroup if
    /// read at receipt, for the requirement's checks.
    let trailer: MessageTrailer
    /// Whether the sender waits for a reply (XPC's `expectsReply`).
    public let expectsReply: Bool
    /// Whether the message asks for a subscription
    /// (``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)``): hand it to
    /// ``XPCPublisher/subscribe(_:)``, which answers it.
    public let isSubscriptionRequest: Bool

    /// Where a numbered call's reply goes: the client's session reply port,
    /// and the call's number, sent back with the reply; how long the reply
    /// waits for room there, and what ends the session when it waited in vain.
    struct NumberedReply: Sendable {
        let right: SendRight
        let number: UInt64
        /// The listener's reply timeout.
        let timeout: Duration
        /// Ends the session with the error: its client stopped reading.
        let stalled: @Sendable (XPCRichError) -> Void
    }

    /// The message and, for a numbered call, its reply route, until answered.
    struct Held: ~Copyable, Sendable {
        var message: Message?
        var route: NumberedReply?
    }

    private let held: HarborLock<Held>

    init(_ message: consuming Message, route: NumberedReply? = nil) {
        sender = message.trailer.sender
        trailer = message.trailer
        expectsReply = message.hasReplyRight || route != nil
        isSubscriptionRequest = message.id == XPCWire.subscribe && message.hasReplyRight
        held = HarborLock(Held(message: message, route: route))
    }

    // A message released unanswered tells its waiting sender so, at once.
    deinit {
        if isAwaitingReply { fail(XPCRichError(.noReply, "the service released the message without replying")) }
    }

    /// Decodes the body as `type` (XPC's `decode(as:)`); rights and regions
    /// the value holds are taken out of the message.
    /// - Throws: ``XPCRichError/Code/codingFailed`` if the body is not a `type`.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws(XPCRichError) -> T {
        // Written inside the lock by this thread only, read after it.
        nonisolated(unsafe) var result: Result<T, XPCRichError> = .failure(
            XPCRichError(.codingFailed, "the message was already consumed"))
        self.held.withLock { held in
            guard var message = held.message.take() else { return }
            do {
                result = .success(try MessageDecoder().decode(type, from: &message))
            } catch {
                result = .failure(XPCRichError(.codingFailed, "\(error)"))
            }
            held.message = consume message
        }
        return try result.get()
    }

    /// Whether the sender meets `requirement` (XPC's `senderSatisfies(_:)`);
    /// its cgroup as read when the message arrived, if the listener read it
    /// (``XPCPeerRequirement/isInCgroup(_:)``).
    public func senderSatisfies(_ requirement: XPCPeerRequirement) -> Bool {
        (try? requirement.check(trailer)) != nil
    }

    /// Answers the message with `value` (XPC's `reply(_:)`): a numbered
    /// call through the session's reply port, with its number; any other
    /// message through the send-once reply right it carried. A second reply, or a reply to a
    /// message that expects none, throws ``XPCRichError/Code/noReply``.
    ///
    /// A numbered call's reply waits at most the listener's reply timeout
    /// (``XPCListener/defaultReplyTimeout`` unless its `replyTimeout:`
    /// says) for room in the client's reply port: a client that stopped
    /// reading it then loses the reply and its session (which ends, its
    /// cancellation handler getting the error), and this throws
    /// ``XPCRichError/Code/replyTimedOut``. A send-once reply never waits.
    public func reply(_ value: some Encodable) throws(XPCRichError) {
        let reply: Message
        do {
            reply = try MessageEncoder().encode(value, id: XPCWire.reply)
        } catch {
            throw XPCRichError(.codingFailed, "\(error)")
        }
        try answer(reply)
    }

    /// Answers with a typed refusal (the sender's call throws `error`).
    func fail(_ error: XPCRichError) {
        try? answer(Message(id: XPCWire.failure, text: "\(error.code.rawValue)\t\(error.reason)"))
    }

    /// The rights to the subscriber's port a subscription request carries
    /// last (a send right for the events, a send-once right for the end),
    /// taken out; nil if they are not there.
    func takeSubscriberRights() -> (events: SendRight, end: SessionWake)? {
        guard isSubscriptionRequest else { return nil }
        return self.held.withLock { held -> (events: SendRight, end: SessionWake)? in
            guard var message = held.message.take() else { return nil }
            let count = message.carriedRights.count
            var rights: (events: SendRight, end: SessionWake)?
            if count >= 2, let events = try? message.takeSendRight(at: count - 2) {
                let end = try? message.takeSendOnceRight(at: count - 1)
                switch consume end {
                case .some(let end): rights = (events, SessionWake(end))
                case .none: break
                }
            }
            held.message = consume message
            return rights
        }
    }

    /// Whether a reply is still owed.
    var isAwaitingReply: Bool { held.withLock { $0.route != nil || ($0.message?.hasReplyRight ?? false) } }

    private func answer(_ reply: consuming Message) throws(XPCRichError) {
        if let route = held.withLock({ held -> NumberedReply? in
            defer { held.route = nil }
            return held.route
        }) {
            XPCWire.append(route.number, to: &reply)
            do {
                try route.right.send(reply, timeout: route.timeout)
                return
            } catch where error.code == .timedOut {
                // A client that stops reading its reply port may not hold
                // the session's thread: the reply goes, and the session.
                let stalled = XPCRichError(.replyTimedOut, "the client took no reply for \(route.timeout): "
                                           + "its reply port stayed full")
                route.stalled(stalled)
                throw stalled
            } catch {
                throw XPCRichError(.connectionInterrupted, "the sender is gone: \(error.code)")
            }
        }
        let right: ReplyRight? = held.withLock { held -> ReplyRight? in
            guard var message = held.message.take() else { return nil }
            let right = message.takeReplyRight()
            held.message = consume message
            return right
        }
        switch consume right {
        case .none:
            throw XPCRichError(.noReply, "the message expects no reply, or was already answered")
        case .some(let right):
            do {
                try right.send(reply)
            } catch {
                throw XPCRichError(.connectionInterrupted, "the sender is gone: \(error.code)")
            }
        }
    }
}
