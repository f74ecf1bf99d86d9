// Harbor — decodes a message's body as a Codable value, rights and regions included.
import HarborPorts

/// Decodes a `Decodable` value from a `Message` that
/// ``MessageEncoder`` made, in this process or another: its body, and the
/// carried rights, out-of-line regions and files the body names.
///
/// The body is treated as hostile input, since it may come from any process
/// that holds a send right: before any value is made, the whole body is
/// checked (every length against what remains, containers nested at most
/// ``MessageCodingFormat/maximumDepth`` deep, counts bounded by the body's
/// size, strings and keys UTF-8, no key twice in a container, each right
/// or region index in range, of the right kind and named once). Every
/// failure is a ``MessageCodingError``, never a trap, and nothing is
/// allocated beyond a bounded multiple of the body's size.
///
/// ```swift
/// var message = try inbox.receive()
/// let request = try MessageDecoder().decode(Subscribe.self, from: &message)
/// try request.events.send(Message(id: 1, text: "tick"))
/// try message.reply(MessageEncoder().encode(Ack(), id: 3))   // the reply right stayed
/// ```
///
/// **Thread safety:** a value; any thread.
public struct MessageDecoder: Sendable {
    /// Handed to the values' `init(from:)` as the decoder's `userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// A decoder with no `userInfo`.
    public init() {}

    /// Decodes a `T` from `message`'s body, taking out of `message` each
    /// carried right the value holds. The message keeps its reply right and
    /// any right the body does not name. A right taken by a decoding that
    /// then fails is released with the partial value (a receive right's
    /// port destroyed, a send-once right's notification sent), never left
    /// in the message a second time.
    ///
    /// - Throws: ``MessageCodingError``: ``MessageCodingError/Code/malformedBody``,
    ///   ``MessageCodingError/Code/unsupportedVersion``,
    ///   ``MessageCodingError/Code/limitExceeded`` and
    ///   ``MessageCodingError/Code/invalidRightIndex`` for a body that is
    ///   not well formed; ``MessageCodingError/Code/typeMismatch``,
    ///   ``MessageCodingError/Code/keyNotFound``, ``MessageCodingError/Code/valueNotFound``
    ///   and ``MessageCodingError/Code/dataCorrupted`` for one that is not a `T`.
    public func decode<T: Decodable>(_ type: T.Type, from message: inout Message) throws(MessageCodingError) -> T {
        let state = try Self.state(for: message, userInfo: userInfo)
        defer {
            if !state.taken.isEmpty {
                for index in state.taken { message.content.rights[index] = .taken }
            }
            if !state.takenFiles.isEmpty {
                for index in state.takenFiles { message.content.files[index] = nil }
            }
        }
        do {
            return try BodyDecoder(state: state).unbox(type, at: 0, key: nil)
        } catch {
            throw MessageCodingError.wrapping(error)
        }
    }

    /// Checks `message`'s body (``BodyReader``) and holds it with the
    /// message's rights and regions, ready to decode.
    static func state(for message: borrowing Message, userInfo: [CodingUserInfoKey: any Sendable])
        throws(MessageCodingError) -> DecodingState
    {
        let body = message.content.body
        let rights = message.content.rights
        let regions = message.content.regions
        let files = message.content.files
        let reader: BodyReader
        do {
            reader = try body.withUnsafeBytes { bytes in
                try BodyReader.parse(bytes, rights: rights.map(\.kind), regionCount: regions.count, fileCount: files.count)
            }
        } catch {
            throw MessageCodingError.wrapping(error)
        }
        return DecodingState(body: body, reader: reader, rights: rights, regions: regions, files: files, userInfo: userInfo)
    }

    /// Decodes a `T` from `message`, which is used up: whatever the value
    /// does not take (the reply right, rights the body does not name) is
    /// released with it.
    ///
    /// - Throws: as `decode(_:from:)` with an `inout` message.
    public func decode<T: Decodable>(_ type: T.Type, from message: consuming Message) throws(MessageCodingError) -> T {
        var message = message
        return try decode(type, from: &message)
    }
}
