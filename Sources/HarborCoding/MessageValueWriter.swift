// Harbor — a body of several values, written one at a time (a call's arguments).
import HarborPorts

/// Writes several `Encodable` values, one at a time, into one message: its
/// body an array of them (``MessageCodingFormat``), their rights and
/// regions carried by the message. For a caller that gets its values one by
/// one rather than as one value: a distributed actor's invocation encoder
/// (`recordArgument`), a session's request with a header and a payload.
/// ``MessageValueReader`` reads them back one at a time, each as its type.
///
/// ```swift
/// var writer = MessageValueWriter()
/// try writer.append("subscribe")
/// try writer.append(Subscription(topic: "clock.tick", events: events))
/// let message = try writer.message(id: 7)
/// ```
///
/// Rights move out of carriers when ``message(id:)`` makes the message, as
/// in ``MessageEncoder/encode(_:id:)``.
///
/// **Thread safety:** a value with one owner.
public struct MessageValueWriter: ~Copyable {
    private let state: EncodingState
    private let values = EncodedArray()

    /// A writer with no values yet; `userInfo` is handed to each value's `encode(to:)`.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        state = EncodingState(userInfo: userInfo)
    }

    /// How many values were appended.
    public var count: Int { values.items.count }

    /// Appends `value`.
    /// - Throws: ``MessageCodingError`` as ``MessageEncoder/encode(_:id:)``
    ///   does (limits, carriers, the value's own errors).
    public mutating func append<T: Encodable>(_ value: T) throws(MessageCodingError) {
        do {
            values.items.append(try BodyEncoder.encode(value, state: state))
        } catch {
            throw MessageCodingError.wrapping(error)
        }
    }

    /// The message: id `id`, a body holding the values in order, and every
    /// right and region they hold.
    /// - Throws: ``MessageCodingError/Code/limitExceeded`` past the body's
    ///   size; ``MessageCodingError/Code/rightAlreadyTaken`` if a carrier
    ///   was emptied since it was appended.
    public func message(id: Int32) throws(MessageCodingError) -> Message {
        try MessageEncoder.message(id: id, root: .array(values), state: state)
    }
}
