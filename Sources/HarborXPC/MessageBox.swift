// Harbor — MessageBox: a piece of an XPC session (XPCSession+Calls.swift).
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem

/// A request carried to the thread that sends it.
final class MessageBox: Sendable {
    private let message: HarborLock<Result<Message, XPCRichError>?>

    init(_ message: consuming Result<Message, XPCRichError>) { self.message = HarborLock(Optional(message)) }

    func take() throws(XPCRichError) -> Message {
        let taken: Result<Message, XPCRichError>? = message.withLock { $0.take() }
        switch consume taken {
        case .none: throw XPCRichError(.noReply, "the request was already sent")
        case .some(let result): return try result.get()
        }
    }
}
