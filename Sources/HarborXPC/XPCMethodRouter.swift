// HarborXPC — a listener's handlers by method name, and the interface they make.
import HarborCoding

/// A session's message handler that routes ``XPCMethodCall`` messages by
/// method name (a MIG subsystem's routine table, a varlink service's
/// methods), and the ``XPCInterface`` that describes them.
///
/// ```swift
/// var methods = XPCMethodRouter(interface: "com.example.clock")
/// try methods.add("now", example: Ask(offset: 0), reply: Now(seconds: 0)) { ask in
///     guard ask.offset >= 0 else { throw ClockError.negative }   // an error reply: methodFailed
///     return Now(seconds: 42 + ask.offset)
/// }
/// let listener = try XPCListener(service: "com.example.clock", interface: methods.interface) { request in
///     request.accept(methods: methods)
/// }
/// ```
///
/// For each message, ``handle(_:)`` reads the `method` of the call and:
/// - no method of that name: the caller's call throws
///   ``XPCRichError/Code/methodNotFound``;
/// - `parameters` that do not decode as the method's request type:
///   ``XPCRichError/Code/codingFailed``, with the decoder's reason;
/// - a handler that throws an ``XPCRichError``: that error; any other
///   error: ``XPCRichError/Code/methodFailed``, its reason the error's type
///   and description;
/// - otherwise the handler's value is the reply.
///
/// A message that is not a method call (no `method` string at its top) goes
/// to the `fallback` handler, so ordinary messages keep working beside
/// method calls; without one it is refused with `codingFailed`.
///
/// **Thread safety:** a value; ``handle(_:)`` from any thread.
public struct XPCMethodRouter: Sendable {
    /// The interface the router's methods make: publish it with
    /// `XPCListener(…, interface:)`.
    public private(set) var interface: XPCInterface
    private var handlers: [String: @Sendable (XPCReceivedMessage) -> (any Encodable)?] = [:]
    private let fallback: (@Sendable (XPCReceivedMessage) -> (any Encodable)?)?

    /// A router with no methods yet.
    /// - Parameters:
    ///   - interface: the interface's name.
    ///   - fallback: handles messages that are not method calls, as an
    ///     `accept` handler would; nil refuses them.
    public init(interface: String, fallback: (@Sendable (XPCReceivedMessage) -> (any Encodable)?)? = nil) {
        self.interface = XPCInterface(name: interface)
        self.fallback = fallback
    }

    /// Adds `method`, its request and reply types declared.
    ///
    /// A method added twice keeps the last handler and description.
    public mutating func add<Request: Codable & Sendable, Reply: Encodable & Sendable>(
        _ method: String, request: XPCType, reply: XPCType,
        _ handler: @escaping @Sendable (Request) throws -> Reply
    ) {
        interface.methods.removeAll { $0.name == method }
        interface.methods.append(XPCInterface.Method(name: method, request: request, reply: reply))
        handlers[method] = { message in
            let call: XPCMethodCall<Request>
            switch Result(catching: { () throws(XPCRichError) in try message.decode(as: XPCMethodCall<Request>.self) }) {
            case .success(let decoded): call = decoded
            case .failure(let error):
                message.fail(XPCRichError(.codingFailed, "the parameters of \(method) are not a \(Request.self): \(error.reason)"))
                return nil
            }
            do {
                return try handler(call.parameters)
            } catch let error as XPCRichError {
                message.fail(error)
            } catch {
                message.fail(XPCRichError(.methodFailed, "\(type(of: error)): \(error)"))
            }
            return nil
        }
    }

    /// Adds `method`, its request and reply types described by sample
    /// values (``XPCType/init(describing:)``: a sample shows only what it
    /// holds).
    /// - Throws: ``XPCRichError/Code/codingFailed`` if a sample has no shape.
    public mutating func add<Request: Codable & Sendable, Reply: Encodable & Sendable>(
        _ method: String, example request: Request, reply: Reply,
        _ handler: @escaping @Sendable (Request) throws -> Reply
    ) throws(XPCRichError) {
        add(method, request: try XPCType(describing: request), reply: try XPCType(describing: reply), handler)
    }

    /// Routes one message (see the type's description); the session's
    /// message handler (``XPCListener/IncomingSessionRequest/accept(methods:)``).
    public func handle(_ message: XPCReceivedMessage) -> (any Encodable)? {
        guard let name = try? message.decode(as: MethodName.self).method else {
            if let fallback { return fallback(message) }
            message.fail(XPCRichError(.codingFailed, "not a method call of \(interface.name)"))
            return nil
        }
        guard let handler = handlers[name] else {
            message.fail(XPCRichError(.methodNotFound,
                                      "\(interface.name) has no method \(XPCWire.reason(String(name.prefix(128))))"))
            return nil
        }
        return handler(message)
    }

    /// The `method` of a call, read before its parameters' type is known.
    private struct MethodName: Decodable {
        let method: String
    }
}
