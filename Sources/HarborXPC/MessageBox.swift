// Harbor — MessageBox: a piece of an XPC session (XPCSession+Calls.swift).
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem
import Synchronization

/// A request carried to the thread that sends it, or an event carried to
/// the task that takes it.
///
/// A box is often made on one thread and taken on another, by a task whose
/// continuation was resumed before it suspended: a hand-off through the
/// concurrency runtime's own atomics, which ThreadSanitizer does not see.
/// The box publishes itself (a releasing store at the end of `init`, an
/// acquiring load at the start of ``take()``), so everything its maker
/// wrote before, the message included, is ordered before the taker's reads
/// for every checker, not only in fact.
final class MessageBox: Sendable {
    private let message: HarborLock<Result<Message, XPCRichError>?>
    private let published = Atomic(false)

    init(_ message: consuming Result<Message, XPCRichError>) {
        self.message = HarborLock(Optional(message))
        published.store(true, ordering: .releasing)
    }

    func take() throws(XPCRichError) -> Message {
        _ = published.load(ordering: .acquiring)
        let taken: Result<Message, XPCRichError>? = message.withLock { $0.take() }
        switch consume taken {
        case .none: throw XPCRichError(.noReply, "the request was already sent")
        case .some(let result): return try result.get()
        }
    }
}
