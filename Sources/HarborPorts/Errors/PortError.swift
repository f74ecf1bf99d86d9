// Harbor — the typed error every port operation throws.
import SystemPackage
import HarborSystem

/// Why a port operation failed.
///
/// A struct around a code rather than an enum, so new codes can be added
/// without breaking clients (the swift-service-lifecycle pattern). Compare
/// codes with `==` or match them in a `catch`:
///
/// ```swift
/// do { try send.send(message, timeout: .zero) }
/// catch PortError.Code.queueFull { … }
/// ```
///
/// A failed send never loses the message: ``takeUndeliveredMessage()`` gives
/// it back, carried rights and all (Mach returns the message to the sender
/// the same way).
///
/// **Thread safety:** any thread.
public struct PortError: HarborError {
    /// What kind of failure this is.
    public struct Code: HarborErrorCode {
        public typealias Failure = PortError
        /// The code's name, as logs print it.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The port's receive right is gone (destroyed, or its process died).
        /// Mach: `MACH_SEND_INVALID_DEST` / a dead name.
        public static let deadName = Code("dead name")
        /// A send or receive waited as long as it was allowed to.
        /// Mach: `MACH_SEND_TIMED_OUT`, `MACH_RCV_TIMED_OUT`.
        public static let timedOut = Code("timed out")
        /// The queue was at its limit and the send was told not to wait
        /// (timeout zero). Mach reports this as a send timeout.
        public static let queueFull = Code("queue full")
        /// A right was used that is not there: already taken out of a message,
        /// of the wrong kind, or out of range.
        public static let invalidRight = Code("invalid right")
        /// The body or the number of carried rights is over the limit
        /// (``Message/maximumBodySize``, ``Message/maximumCarriedRights``).
        public static let messageTooLarge = Code("message too large")
        /// Bytes from another process did not decode as a Harbor message.
        public static let malformedMessage = Code("malformed message")
        /// An argument is out of its documented range.
        public static let invalidArgument = Code("invalid argument")
        /// The kernel refused a resource (descriptors, memory).
        public static let resourceShortage = Code("resource shortage")
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for logs saying what was being done.
    public let detail: String
    /// The system call failure behind this error, if there was one.
    public let underlying: SystemError?
    private let undelivered: UndeliveredMessage?

    package init(_ code: Code, _ detail: String, underlying: SystemError? = nil,
                 returning content: MessageContent? = nil) {
        self.code = code
        self.detail = detail
        self.underlying = underlying
        self.undelivered = content.map(UndeliveredMessage.init)
    }

    /// Wraps a system call failure; EMFILE/ENFILE/ENOMEM become `resourceShortage`.
    package init(_ error: SystemError, _ detail: String) {
        switch error.errno {
        case .tooManyOpenFiles, .tooManyOpenFilesInSystem, .noMemory:
            self.init(.resourceShortage, detail, underlying: error)
        default:
            self.init(.invalidArgument, detail, underlying: error)
        }
    }

    /// The message a failed send did not deliver, with every right it carried.
    /// Returns it once; later calls return `nil`.
    public func takeUndeliveredMessage() -> Message? {
        undelivered?.take().map { Message(content: $0) }
    }

    public var description: String {
        var text = "\(code): \(detail)"
        if let underlying { text += " (\(underlying))" }
        return text
    }
}

/// Holds a send's message until the caller takes it back out of the error.
private final class UndeliveredMessage: Sendable {
    private let content: HarborLock<MessageContent?>
    init(_ content: MessageContent) { self.content = HarborLock(content) }
    func take() -> MessageContent? { content.withLockedValue { $0.take() } }
}
