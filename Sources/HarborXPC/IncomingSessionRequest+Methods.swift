// HarborXPC — accepting a session whose messages are method calls.

extension XPCListener.IncomingSessionRequest {
    /// Accepts the session with `methods` as its message handler: each
    /// ``XPCMethodCall`` goes to its method (``XPCMethodRouter``), other
    /// messages to the router's fallback.
    public func accept(methods: XPCMethodRouter) -> Decision {
        accept { message in methods.handle(message) }
    }
}
