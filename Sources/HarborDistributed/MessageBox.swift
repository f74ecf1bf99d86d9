// HarborDistributed — a message handed from one thread to another, once.
import HarborPorts
import HarborSystem

/// Holds one message until someone takes it: a reply from the system's
/// thread to the waiting call (the caller makes the box empty, the thread
/// puts the answer in: the box's lock is what orders the two for
/// ThreadSanitizer, which does not see the concurrency runtime's own
/// hand-off), an invocation from that thread to the task that serves it.
final class MessageBox: Sendable {
    private let message: HarborLock<Message?>

    init(_ message: consuming Message) { self.message = HarborLock(Optional(message)) }

    /// An empty box.
    init() { message = HarborLock(nil) }

    /// Puts `newMessage` in, replacing what was there.
    func put(_ newMessage: consuming Message) {
        var incoming: Message? = consume newMessage
        message.withLock { $0 = incoming.take() }
    }

    /// The message, the first time; `nil` after.
    func take() -> Message? { message.withLock { $0.take() } }
}
