// Harbor — the typed error of descriptor, process and signal sources.
import HarborPorts

/// Why a descriptor, process or signal source could not be made.
///
/// A struct around a code, like `PortError` and ``LoopError``, so codes can
/// be added without breaking clients. Match with
/// `catch SourceError.Code.signalNotBlocked`.
///
/// **Thread safety:** any thread.
public struct SourceError: HarborError {
    /// What kind of failure this is.
    public struct Code: HarborErrorCode {
        public typealias Failure = SourceError
        /// The code's name, as logs print it.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The kernel refused a call (see ``SourceError/underlying``), for
        /// example `signalfd` or `pidfd_open` when descriptors run out.
        public static let systemCallFailed = Code("system call failed")
        /// A signal source was made for a signal that some thread of the
        /// process does not block. The kernel would then deliver the signal
        /// to that thread (running its default action, for SIGTERM: death)
        /// instead of queueing it for the signal descriptor.
        public static let signalNotBlocked = Code("signal not blocked")
        /// An argument is out of range (a negative descriptor, signal 0,
        /// SIGKILL or SIGSTOP, which cannot be caught).
        public static let invalidArgument = Code("invalid argument")
        /// The process to watch does not exist (already reaped, or never was).
        public static let noSuchProcess = Code("no such process")
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for logs saying what was being done and what to do about it.
    public let detail: String
    /// The system call's error, for ``Code/systemCallFailed``.
    public let underlying: SystemError?

    package init(_ code: Code, _ detail: String, underlying: SystemError? = nil) {
        self.code = code
        self.detail = detail
        self.underlying = underlying
    }

    public var description: String {
        "\(code): \(detail)" + (underlying.map { " (\($0))" } ?? "")
    }
}
