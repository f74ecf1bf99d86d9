// Harbor — the typed error of descriptor, process and signal sources.
import HarborPorts

/// Why a descriptor, process or signal source could not be made.
///
/// A struct around a code, like `PortError` and ``LoopError``, so codes can
/// be added without breaking clients. Match with
/// `catch SourceError.Code.signalNotBlocked`.
///
/// **Thread safety:** any thread.
public struct SourceError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable { case systemCallFailed, signalNotBlocked, invalidArgument, noSuchProcess }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The kernel refused a call (see ``SourceError/underlying``), for
        /// example `signalfd` or `pidfd_open` when descriptors run out.
        public static let systemCallFailed = Code(.systemCallFailed)
        /// A signal source was made for a signal that some thread of the
        /// process does not block. The kernel would then deliver the signal
        /// to that thread (running its default action, for SIGTERM: death)
        /// instead of queueing it for the signal descriptor.
        public static let signalNotBlocked = Code(.signalNotBlocked)
        /// An argument is out of range (a negative descriptor, signal 0,
        /// SIGKILL or SIGSTOP, which cannot be caught).
        public static let invalidArgument = Code(.invalidArgument)
        /// The process to watch does not exist (already reaped, or never was).
        public static let noSuchProcess = Code(.noSuchProcess)

        public var description: String {
            switch base {
            case .systemCallFailed: "system call failed"
            case .signalNotBlocked: "signal not blocked"
            case .invalidArgument: "invalid argument"
            case .noSuchProcess: "no such process"
            }
        }

        /// Lets `catch SourceError.Code.signalNotBlocked` match a thrown ``SourceError``.
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? SourceError)?.code == pattern
        }
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
