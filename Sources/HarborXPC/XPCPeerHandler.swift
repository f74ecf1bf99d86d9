// HarborXPC — a session's handler as a type.
/// A type that handles one session's messages (XPC's `XPCPeerHandler`);
/// accept a session with it through the `accept(_:)` of
/// ``XPCListener/IncomingSessionRequest`` that takes a handler factory.
///
/// ```swift
/// struct ClockHandler: XPCPeerHandler {
///     func handleIncomingRequest(_ request: Ask) -> Now? { Now(seconds: 42) }
/// }
/// ```
public protocol XPCPeerHandler: Sendable {
    /// The type each message decodes as.
    associatedtype Input: Decodable
    /// The type of the reply.
    associatedtype Output: Encodable
    /// Handles one message; a non-nil result is the reply when the sender
    /// waits for one.
    func handleIncomingRequest(_ message: Input) -> Output?
    /// Called once when the session ends.
    func handleCancellation(error: XPCRichError)
}

extension XPCPeerHandler {
    /// Does nothing.
    public func handleCancellation(error: XPCRichError) {}
}
