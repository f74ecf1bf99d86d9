// HarborXPC — what a listener publishes about itself: its methods and their types.
import HarborCoding

/// A listener's published interface (varlink's interface description, D-Bus
/// introspection): a name and its methods, each with the shape of its
/// request and of its reply. `harbor introspect NAME` prints it, and
/// `harbor call NAME METHOD JSON` uses it to fit the JSON to the request.
///
/// ```swift
/// var methods = XPCMethodRouter(interface: "com.example.clock")
/// try methods.add("now", example: Ask(offset: 0), reply: Now(seconds: 0)) { ask in
///     Now(seconds: 42 + ask.offset)
/// }
/// let listener = try XPCListener(service: "com.example.clock", interface: methods.interface) { request in
///     request.accept(methods: methods)
/// }
/// let published = try XPCInterface.introspect("com.example.clock")   // from any process
/// ```
///
/// A listener answers an introspection request (wire id `…0C`, XPC.md)
/// from any process its requirement admits, without opening a session.
///
/// **Thread safety:** a value; any thread.
public struct XPCInterface: Codable, Sendable, Hashable {
    /// One method: what it is called, what it takes and what it gives.
    public struct Method: Codable, Sendable, Hashable {
        /// The name a call gives (``XPCMethodCall/method``).
        public var name: String
        /// The shape of its parameters.
        public var request: XPCType
        /// The shape of its reply.
        public var reply: XPCType

        /// A method named `name` taking `request` and giving `reply`.
        public init(name: String, request: XPCType, reply: XPCType) {
            self.name = name
            self.request = request
            self.reply = reply
        }
    }

    /// The interface's name (by convention the service's, reversed-DNS).
    public var name: String
    /// Its methods, in the order they were added.
    public var methods: [Method]

    /// An interface named `name` with `methods`.
    public init(name: String, methods: [Method] = []) {
        self.name = name
        self.methods = methods
    }

    /// The method named `name`, if there is one.
    public func method(named name: String) -> Method? { methods.first { $0.name == name } }
}
