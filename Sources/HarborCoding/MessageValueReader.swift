// Harbor — a body of several values, read one at a time (a call's arguments).
import HarborPorts

/// Reads the values of a body that ``MessageValueWriter`` wrote (an
/// array), one at a time, each as the type the caller asks for: a
/// distributed actor's invocation decoder (`decodeNextArgument`), a session
/// reading a header before it knows the payload's type.
///
/// The whole body is checked when the reader is made, as
/// ``MessageDecoder`` checks it (hostile input: typed errors, bounded). The
/// reader owns the message; ``finish()`` gives it back, with the rights the
/// values took marked taken and its reply right still in it.
///
/// ```swift
/// var reader = try MessageValueReader(message)
/// let method = try reader.next(String.self)
/// let subscription = try reader.next(Subscription.self)
/// var rest = reader.finish()          // to reply through
/// ```
///
/// **Thread safety:** a value with one owner.
public struct MessageValueReader: ~Copyable {
    private var message: Message
    private let state: DecodingState
    private let root: BodyDecoder
    private var cursor: Int
    private var index = 0

    /// How many values the body holds.
    public let count: Int

    /// Checks `message`'s body and gets ready to read its first value.
    /// - Throws: ``MessageCodingError`` for a body that is not well formed
    ///   (as ``MessageDecoder`` does), or ``MessageCodingError/Code/typeMismatch``
    ///   when it is not an array of values.
    public init(_ message: consuming Message, userInfo: [CodingUserInfoKey: any Sendable] = [:])
        throws(MessageCodingError)
    {
        let state = try MessageDecoder.state(for: message, userInfo: userInfo)
        try state.expect(0, .array, path: [])
        self.message = message
        self.state = state
        root = BodyDecoder(state: state)
        cursor = 1
        count = Int(state.tape[0].count)
    }

    /// Whether every value was read.
    public var isAtEnd: Bool { index >= count }

    /// Reads the next value as a `T`. A value that fails to decode is
    /// skipped all the same (its rights, if it took any, are released).
    /// - Throws: ``MessageCodingError/Code/valueNotFound`` past the last
    ///   value; what decoding a `T` throws.
    public mutating func next<T: Decodable>(_ type: T.Type) throws(MessageCodingError) -> T {
        guard !isAtEnd else {
            throw MessageCodingError(.valueNotFound, "the body holds \(count) values; no value \(index)")
        }
        let node = cursor
        let key = CodingKeyName(index: index)
        cursor = Int(state.tape[node].end)
        index += 1
        defer { markTaken() }
        do {
            return try root.unbox(type, at: node, key: key)
        } catch {
            throw MessageCodingError.wrapping(error)
        }
    }

    /// The message, with the rights the values took marked taken.
    public consuming func finish() -> Message {
        markTaken()
        return message
    }

    private mutating func markTaken() {
        for index in state.taken { message.content.rights[index] = .taken }
        for index in state.takenFiles { message.content.files[index] = nil }
    }
}
