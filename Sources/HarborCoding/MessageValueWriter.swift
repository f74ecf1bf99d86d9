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
    /// The rights and regions, and the values' bytes (after the array's
    /// tag and count, which ``message(id:)`` writes), streamed.
    private let state: EncodingState
    /// What writing a value's tree threw (a container nested too deep),
    /// thrown by ``message(id:)`` as a whole body's writing would.
    private var failure: MessageCodingError?

    /// A writer with no values yet; `userInfo` is handed to each value's `encode(to:)`.
    public init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        state = EncodingState(userInfo: userInfo, writer: BodyWriter(values: 128), outerDepth: 1)
    }

    /// How many values were appended.
    public private(set) var count = 0

    /// Appends `value`. A value that throws adds nothing: no bytes, no rights.
    /// - Throws: ``MessageCodingError`` as ``MessageEncoder/encode(_:id:)``
    ///   does (limits, carriers, the value's own errors).
    public mutating func append<T: Encodable>(_ value: T) throws(MessageCodingError) {
        let start = state.stream.writer.bytes.count
        let mark = state.mark
        do {
            if try StreamEncoder.stream(value, state: state) {
                count += 1
                return
            }
            // Written as a tree instead (BodyStream says when).
            state.stream.reset(to: start)
            state.rollBack(to: mark)
            let root = try BodyEncoder.encode(value, state: state)
            do { try state.stream.writer.write(root, depth: 1) } catch { failure = failure ?? error }
            count += 1
        } catch {
            state.stream.reset(to: start)
            state.rollBack(to: mark)
            throw MessageCodingError.wrapping(error)
        }
    }

    /// The message: id `id`, a body holding the values in order, and every
    /// right and region they hold.
    /// - Throws: ``MessageCodingError/Code/limitExceeded`` past the body's
    ///   size; ``MessageCodingError/Code/rightAlreadyTaken`` if a carrier
    ///   was emptied since it was appended.
    public func message(id: Int32) throws(MessageCodingError) -> Message {
        if let failure { throw failure }
        let values = state.stream.writer.bytes
        var body = BodyWriter(capacity: values.count + 8)
        body.tag(.array)
        body.varint(UInt64(count))
        body.bytes.append(contentsOf: values)
        try body.checkSize()
        return try MessageEncoder.message(id: id, body: body.bytes, state: state)
    }
}
