// Harbor — the typed error of the run-loop layer.

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
public struct LoopError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable { case loopTerminated, invalidMode }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The loop's thread has exited (or its worker was stopped), so work
        /// posted to it can never run.
        public static let loopTerminated = Code(.loopTerminated)
        /// `.common` was used where a real mode is needed.
        public static let invalidMode = Code(.invalidMode)

        public var description: String {
            switch base {
            case .loopTerminated: "loop terminated"
            case .invalidMode: "invalid mode"
            }
        }

        /// Lets `catch LoopError.Code.loopTerminated` match a thrown ``LoopError``.
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? LoopError)?.code == pattern
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for logs saying what was being done.
    public let detail: String

    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}
