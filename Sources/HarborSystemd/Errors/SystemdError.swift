// Harbor — the typed error of the systemd layer.
import Glibc  // constants only: EBUSY, ESTALE, ECHILD, EINVAL
import HarborPorts

/// Why a systemd operation (sd-event, sd_notify, socket activation) failed.
///
/// A struct around a code, like `PortError` and `LoopError`, so codes
/// can be added without breaking clients. libsystemd reports failures as a
/// negative errno; ``errno`` keeps it (positive), ``call`` names the function.
/// Match with `catch SystemdError.Code.recursiveDispatch`.
///
/// **Thread safety:** any thread.
public struct SystemdError: HarborError {
    /// What kind of failure this is.
    public struct Code: HarborErrorCode {
        public typealias Failure = SystemdError
        /// The code's name, as logs print it.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// An event loop was asked to run (or dispatch) while it is already
        /// dispatching, or while the other loop of a nesting drives it.
        /// sd-event never dispatches recursively (it answers `-EBUSY`); see
        /// Docs/Systemd.md for what a callout may do in each nesting shape.
        public static let recursiveDispatch = Code("recursive dispatch")
        /// An sd-event loop or a nesting was used from a thread other than the
        /// one it belongs to (sd-event is single-threaded; a Harbor loop runs
        /// only on its own thread).
        public static let wrongThread = Code("wrong thread")
        /// The sd-event loop has exited (`sd_event_exit` ran); it runs no more.
        public static let finished = Code("finished")
        /// An argument is out of range (a name with a newline, an unknown mode).
        public static let invalidArgument = Code("invalid argument")
        /// What was asked for is not offered by the environment (no
        /// `LISTEN_FDS` for this process, a loop whose thread has exited).
        public static let notAvailable = Code("not available")
        /// Any other failure reported by libsystemd or the kernel; see ``errno``.
        public static let system = Code("system error")
    }

    /// The kind of failure.
    public let code: Code
    /// The (positive) errno libsystemd or the kernel reported, 0 if none.
    public let errno: Int32
    /// The function that failed, e.g. `sd_event_add_io`.
    public let call: String
    /// A sentence for logs saying what was being done and what to do instead.
    public let detail: String

    package init(_ code: Code, errno: Int32 = 0, call: String, _ detail: String) {
        self.code = code
        self.errno = errno
        self.call = call
        self.detail = detail
    }

    /// The error for a negative return `result` of libsystemd's `call`.
    package init(returned result: Int32, call: String, _ detail: String = "") {
        let number = -result
        let code: Code = switch number {
        case EBUSY: .recursiveDispatch
        case ESTALE: .finished
        case ECHILD: .wrongThread
        case EINVAL: .invalidArgument
        default: .system
        }
        self.init(code, errno: number, call: call, detail.isEmpty ? SystemError.reason(number) : detail)
    }

    public var description: String {
        errno == 0 ? "\(call): \(code): \(detail)" : "\(call): \(code): \(detail) (errno \(errno))"
    }
}

/// Turns a libsystemd return value into a typed error (negative) or the value.
@inline(__always)
package func checkSystemd(_ result: Int32, _ call: String, _ detail: @autoclosure () -> String = "") throws(SystemdError) -> Int32 {
    if result < 0 { throw SystemdError(returned: result, call: call, detail()) }
    return result
}
