// Harbor — encodes a Codable value into a message: body, rights and regions.
import HarborPorts

/// Encodes an `Encodable` value into a `Message`: its fields in
/// a compact binary body (``MessageCodingFormat``, Docs/Coding.md), and its
/// `SendRight`, ``ReceiveRightCarrier``, ``SendOnceRightCarrier``,
/// `MemoryRegion` and ``FileDescriptorCarrier`` fields as real carried
/// rights, out-of-line regions and file descriptors, which the body names
/// by index. ``MessageDecoder`` reads it back, in this
/// process or another.
///
/// ```swift
/// struct Subscribe: Codable {
///     var topic: String
///     var events: SendRight              // where to send the events
///     var reply: SendOnceRightCarrier    // one answer
/// }
/// let message = try MessageEncoder().encode(request, id: 3)
/// try service.send(message)
/// ```
///
/// Encoding moves the receive and send-once rights out of their carriers
/// into the message, all at once when the whole value has encoded: a failed
/// encoding leaves each carrier holding its right. A send right is copied
/// (one more reference to the same right). A message has no reply right
/// from encoding; set one with `Message.setReplyRight(_:)`.
///
/// **Cost:** the bytes are written as the value encodes, no tree, when
/// it writes each container before going on in its parent (as synthesized
/// `encode(to:)`s do); otherwise (a container written after its parent
/// went on, a key written twice, `superEncoder()`) the value is encoded
/// again as a tree of its containers and the tree written: the same bytes
/// (Docs/Coding.md, "How the encoder writes"; Docs/Benchmarks.md,
/// "codable-message"). **Thread safety:** a value; any thread.
public struct MessageEncoder: Sendable {
    /// Handed to the values' `encode(to:)` as the encoder's `userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    /// An encoder with no `userInfo`.
    public init() {}

    /// Encodes `value` as a message with id `id`.
    ///
    /// - Throws: ``MessageCodingError``: ``MessageCodingError/Code/limitExceeded``
    ///   past a limit of ``MessageCodingFormat`` (body size, depth, rights,
    ///   regions); ``MessageCodingError/Code/rightAlreadyTaken`` for a
    ///   carrier already emptied or named twice; ``MessageCodingError/Code/invalidValue``
    ///   when the value's own `encode(to:)` throws (in ``MessageCodingError/underlying``).
    public func encode<T: Encodable>(_ value: T, id: Int32) throws(MessageCodingError) -> Message {
        let state = EncodingState(userInfo: userInfo, writer: BodyWriter(capacity: 128))
        do {
            if try StreamEncoder.stream(value, state: state) {
                try state.stream.writer.checkSize()
                return try Self.message(id: id, body: state.stream.writer.bytes, state: state)
            }
        } catch {
            throw MessageCodingError.wrapping(error)
        }
        let treeState = EncodingState(userInfo: userInfo)
        let root: EncodedNode
        do { root = try BodyEncoder.encode(value, state: treeState) } catch { throw MessageCodingError.wrapping(error) }
        return try Self.message(id: id, root: root, state: treeState)
    }

    /// Writes `root` as a message's body and moves the rights and regions
    /// `state` collected into the message.
    static func message(id: Int32, root: EncodedNode, state: EncodingState) throws(MessageCodingError) -> Message {
        var writer = BodyWriter()
        try writer.write(root)
        return try message(id: id, body: writer.bytes, state: state)
    }

    /// A message of `body` and the rights and regions `state` collected,
    /// moved into it.
    static func message(id: Int32, body: [UInt8], state: EncodingState) throws(MessageCodingError) -> Message {
        try state.takeCarriedRights()
        var message = Message(id: id, body: body)
        if !state.rights.isEmpty { message.content.rights = state.rights }
        if !state.regions.isEmpty { message.content.regions = state.regions }
        if !state.files.isEmpty { message.content.files = state.files }
        return message
    }
}
