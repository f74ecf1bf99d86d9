// Harbor — a received message as an async sequence's element (elements must be copyable; messages are not).
import HarborPorts
import HarborSystem

/// One message delivered by ``PortMessages``. A `Message` is `~Copyable`
/// (its carried rights must move, never be duplicated), while an async
/// sequence's elements must be copyable, so the message arrives in this
/// box: read ``id``, ``body`` and ``text`` freely, and ``take()`` the
/// message itself — once — to take its rights or reply to it.
///
/// **Cost:** one allocation per message. **Thread safety:** any thread.
public final class ReceivedMessage: Sendable, CustomStringConvertible {
    /// The message's id.
    public let id: Int32
    /// The message's inline body (shared storage, not a copy).
    public let body: [UInt8]
    private let slot: HarborLock<Message?>

    init(_ message: consuming Message) {
        id = message.id
        body = message.body
        slot = HarborLock(.some(message))
    }

    /// The body read as UTF-8.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The message itself; nil if it was taken already.
    public func take() -> Message? {
        slot.withLock { $0.take() }
    }

    public var description: String { "ReceivedMessage(id: \(id), \(body.count) bytes)" }
}
