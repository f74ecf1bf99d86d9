// Harbor — the typed error of the run-loop layer.
import HarborPorts

/// Why a run-loop operation failed.
///
/// A struct around a code, like `PortError`, so codes can be added without
/// breaking clients. Match with `catch LoopError.Code.loopTerminated`.
///
/// Note what is *not* an error: running another thread's loop is a
/// programmer error and traps (Apple traps too), and a loop or mode that
/// cannot get its descriptors traps as CF does when it cannot allocate its
/// ports.
///
/// **Thread safety:** any thread.
public struct LoopError: HarborError {
    /// What kind of failure this is.
    public struct Code: HarborErrorCode {
        public typealias Failure = LoopError
        /// The code's name, as logs print it.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The loop's thread has exited (or its worker was stopped), so work
        /// posted to it can never run.
        public static let loopTerminated = Code("loop terminated")
        /// `.common` was used where a real mode is needed.
        public static let invalidMode = Code("invalid mode")
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for logs saying what was being done.
    public let detail: String

    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }
}
