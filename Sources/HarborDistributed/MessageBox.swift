// HarborDistributed — a message handed from one thread to another, once.
import HarborPorts
import HarborSystem

/// Holds one message until someone takes it: a reply from the system's
/// thread to the waiting call, an invocation from that thread to the task
/// that serves it.
final class MessageBox: Sendable {
    private let message: HarborLock<Message?>

    init(_ message: consuming Message) { self.message = HarborLock(Optional(message)) }

    /// The message, the first time; `nil` after.
    func take() -> Message? { message.withLock { $0.take() } }
}
