// HarborXPC — a message that calls a method by name: the envelope `harbor call` sends.

/// A call of a method by name, `{ method, parameters }` (varlink's call
/// object): the body an ``XPCMethodRouter`` routes by its `method`, and
/// decodes its `parameters` as that method's request type. It travels as an
/// ordinary session message (`sendSync`), so a listener that routes no
/// methods sees a value like any other.
///
/// ```swift
/// let reply = try session.sendSync(XPCMethodCall(method: "now", parameters: Ask(offset: 1)))
/// let now = try reply.decode(as: Now.self)
/// ```
///
/// **Thread safety:** a value; any thread.
public struct XPCMethodCall<Parameters: Codable & Sendable>: Codable, Sendable {
    /// The method's name in the listener's interface.
    public var method: String
    /// Its parameters: the method's request value.
    public var parameters: Parameters

    /// A call of `method` with `parameters`.
    public init(method: String, parameters: Parameters) {
        self.method = method
        self.parameters = parameters
    }
}
