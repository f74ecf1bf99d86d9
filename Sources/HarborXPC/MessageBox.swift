// Harbor — MessageBox: a piece of an XPC session (XPCSession+Calls.swift).
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem

/// A request carried to the thread that sends it.
final class MessageBox: Sendable {
    private let message: HarborLock<Result<Message, XPCRichError>?>

    /// Stores `message` under the lock, not as the lock's initial value:
    /// the box is often made on one thread and taken on another that a
    /// continuation resumed before it suspended, a hand-off through the
    /// concurrency runtime's own atomics, which ThreadSanitizer does not
    /// see. The lock's release here and acquire in ``take()`` order the two.
    init(_ message: consuming Result<Message, XPCRichError>) {
        self.message = HarborLock(nil)
        var carried = Optional(message)
        self.message.withLock { $0 = carried.take() }
    }

    func take() throws(XPCRichError) -> Message {
        let taken: Result<Message, XPCRichError>? = message.withLock { $0.take() }
        switch consume taken {
        case .none: throw XPCRichError(.noReply, "the request was already sent")
        case .some(let result): return try result.get()
        }
    }
}
