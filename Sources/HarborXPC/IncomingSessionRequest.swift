// HarborXPC — a client asking a listener for a session.
import HarborSystem

extension XPCListener {
    /// A client asking for a session, given to the listener's
    /// `incomingSessionHandler` (XPC's `XPCListener.IncomingSessionRequest`):
    /// accept it with a message handler, or reject it.
    ///
    /// ```swift
    /// let listener = try XPCListener(service: "com.example.clock") { request in
    ///     guard request.peer.uid == getuid() else { return request.reject(reason: "not yours") }
    ///     return request.accept { message in Now(seconds: clock()) }
    /// }
    /// ```
    ///
    /// **Thread safety:** a value; any thread.
    public struct IncomingSessionRequest: Sendable {
        /// The kernel's word on who asks (`trailer.sender` of the request:
        /// uid, gid and pid; `Docs/Security.md`). Darwin's requests show the
        /// peer's audit token; this is its Linux counterpart.
        public let peer: ProcessIdentity

        /// What the listener does with the request: made only by one of the
        /// `accept` methods or by ``reject(reason:)``.
        public struct Decision: Sendable {
            enum Kind: Sendable {
                case accept(handler: @Sendable (XPCReceivedMessage) -> (any Encodable)?,
                            cancellation: (@Sendable (XPCRichError) -> Void)?)
                case reject(reason: String)
            }
            let kind: Kind
        }

        /// Accepts the session; `messageHandler` runs once per message, in
        /// order, one at a time, on the listener's ``XPCHandlerTarget`` (by
        /// default the session's own thread). A non-nil value it returns is
        /// the reply when the sender waits for one (as XPC's).
        public func accept(
            _ messageHandler: @escaping @Sendable (XPCReceivedMessage) -> (any Encodable)?
        ) -> Decision {
            Decision(kind: .accept(handler: messageHandler, cancellation: nil))
        }

        /// Accepts the session with a message handler and a cancellation
        /// handler, called once, on the listener's ``XPCHandlerTarget``,
        /// when the session ends (the client cancelled it, went away or
        /// died, the listener was cancelled, or a reply waited in vain for
        /// the client to read: ``XPCRichError/Code/replyTimedOut``).
        public func accept(
            incomingMessageHandler: @escaping @Sendable (XPCReceivedMessage) -> (any Encodable)?,
            cancellationHandler: (@Sendable (XPCRichError) -> Void)?
        ) -> Decision {
            Decision(kind: .accept(handler: incomingMessageHandler, cancellation: cancellationHandler))
        }

        /// Accepts the session with a peer handler (XPC's `XPCPeerHandler`):
        /// its `handleIncomingRequest(_:)` gets each message decoded as its
        /// `Input`, and what it returns is the reply.
        public func accept<Handler: XPCPeerHandler>(_ handlerFactory: () -> Handler) -> Decision {
            let handler = handlerFactory()
            return Decision(kind: .accept(handler: { message in
                guard let input = try? message.decode(as: Handler.Input.self) else {
                    message.fail(XPCRichError(.codingFailed, "the message is not a \(Handler.Input.self)"))
                    return nil
                }
                return handler.handleIncomingRequest(input)
            }, cancellation: { error in handler.handleCancellation(error: error) }))
        }

        /// Rejects the session: the client's session fails with
        /// ``XPCRichError/Code/sessionRejected`` and `reason`.
        public func reject(reason: String) -> Decision {
            Decision(kind: .reject(reason: reason))
        }
    }
}
