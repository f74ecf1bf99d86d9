// HarborXPC — the one error type a session, a listener and a reply throw.
import HarborPorts

/// An error from a session, a listener or a message: XPC's `XPCRichError`,
/// with a typed ``Code`` beside its description.
///
/// ```swift
/// do { let reply = try session.sendSync(Ping()) }
/// catch let error as XPCRichError where error.code == .connectionInterrupted { … }
/// ```
public struct XPCRichError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Hashable, Sendable {
        /// The service died (or its session port was destroyed) with the call
        /// pending: XPC's `XPC_ERROR_CONNECTION_INTERRUPTED`. Retry: the name
        /// may have a new instance.
        case connectionInterrupted
        /// The session was cancelled (by ``XPCSession/cancel(reason:)`` or by
        /// the peer), or could not be made: XPC's `XPC_ERROR_CONNECTION_INVALID`.
        case connectionInvalid
        /// The name is not checked in, or harbord could not be reached.
        case serviceNotFound
        /// The listener's session handler rejected the session
        /// (``XPCListener/IncomingSessionRequest/reject(reason:)``).
        case sessionRejected
        /// A peer requirement refused the message or the session
        /// (``XPCPeerRequirement``).
        case peerRequirementNotMet
        /// A peer requirement needs a fact about the peer that could not be
        /// learnt (its cgroup: the process ended, `/proc` could not be read,
        /// the system has no cgroup v2 hierarchy; the reason says which): the
        /// peer is refused, as when the requirement is not met
        /// (``XPCPeerRequirement/isInCgroup(_:)``).
        case peerIdentityUnavailable
        /// The listener did not answer a session request within the
        /// session's connect timeout (``XPCSession`` `connectTimeout:`): the
        /// service is stopped, or too busy to take sessions. Nothing of the
        /// session is left; a later call asks again.
        case connectTimedOut
        /// A numbered call's reply waited longer than the listener's reply
        /// timeout for room in the client's full reply port (the client
        /// stopped reading it): the reply was dropped and the listener ended
        /// the session (``XPCListener`` `replyTimeout:`).
        case replyTimedOut
        /// A value could not be encoded, or a message could not be decoded as
        /// the type asked.
        case codingFailed
        /// The peer answered with something the protocol does not allow.
        case protocolViolation
        /// A publisher refused a subscription (``XPCPublisher/subscribe(_:)``):
        /// the uid holds its share of the publisher's subscriptions, or the
        /// publisher holds all it may, or was cancelled; the reason says which.
        case subscriptionRejected
        /// The message was answered with no reply, or cannot be replied to.
        case noReply
        /// The listener has no method of the name called
        /// (``XPCMethodRouter``), or publishes no interface.
        case methodNotFound
        /// The method's handler threw an error that is not an
        /// ``XPCRichError``; the reason names its type and says it.
        case methodFailed
    }

    /// What went wrong.
    public let code: Code
    /// Why, in a sentence (from this process, or bounded text from the peer).
    public let reason: String

    /// An error with `code` and `reason`.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Whether the same call may succeed if made again (XPC's `canRetry`):
    /// true only for an interrupted connection.
    public var canRetry: Bool { code == .connectionInterrupted }

    /// `code: reason`.
    public var description: String { "\(code.rawValue): \(reason)" }
}
