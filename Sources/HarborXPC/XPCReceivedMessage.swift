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
    private let message: HarborLock<Message?>
    /// The kernel's word on who sent the message (`trailer.sender`).
    public let sender: ProcessIdentity
    /// Whether the sender waits for a reply (XPC's `expectsReply`).
    public let expectsReply: Bool
    /// Whether the message asks for a subscription
    /// (``XPCSession/subscribe(_:as:queueLimit:)``): hand it to
    /// ``XPCPublisher/subscribe(_:)``, which answers it.
    public let isSubscriptionRequest: Bool

    init(_ message: consuming Message) {
        sender = message.trailer.sender
        expectsReply = message.hasReplyRight
        isSubscriptionRequest = message.id == XPCWire.subscribe && message.hasReplyRight
        self.message = HarborLock(Optional(message))
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
        message.withLock { message in
            guard var held = message.take() else { return }
            do {
                result = .success(try MessageDecoder().decode(type, from: &held))
            } catch {
                result = .failure(XPCRichError(.codingFailed, "\(error)"))
            }
            message = consume held
        }
        return try result.get()
    }

    /// Whether the sender meets `requirement` (XPC's `senderSatisfies(_:)`).
    public func senderSatisfies(_ requirement: XPCPeerRequirement) -> Bool {
        requirement.isSatisfied(by: sender)
    }

    /// Answers the message with `value` (XPC's `reply(_:)`), through the
    /// send-once reply right it carried. A second reply, or a reply to a
    /// message that expects none, throws ``XPCRichError/Code/noReply``.
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
        return message.withLock { message -> (events: SendRight, end: SessionWake)? in
            guard var held = message.take() else { return nil }
            let count = held.carriedRights.count
            var rights: (events: SendRight, end: SessionWake)?
            if count >= 2, let events = try? held.takeSendRight(at: count - 2) {
                let end = try? held.takeSendOnceRight(at: count - 1)
                switch consume end {
                case .some(let end): rights = (events, SessionWake(end))
                case .none: break
                }
            }
            message = consume held
            return rights
        }
    }

    /// Whether a reply is still owed.
    var isAwaitingReply: Bool { message.withLock { $0?.hasReplyRight ?? false } }

    private func answer(_ reply: consuming Message) throws(XPCRichError) {
        let right: ReplyRight? = message.withLock { message -> ReplyRight? in
            guard var held = message.take() else { return nil }
            let right = held.takeReplyRight()
            message = consume held
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
