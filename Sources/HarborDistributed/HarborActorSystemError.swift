// HarborDistributed — the typed errors of distributed calls.
import Distributed
import HarborPorts

/// Why a distributed call, a resolve or a serve failed.
///
/// ```swift
/// do { try await counter.add(1) }
/// catch HarborActorSystemError.Code.deadActor { … }      // its process died
/// ```
///
/// (The code-as-pattern form is `HarborPorts`' `~=`, seen with
/// `import HarborPorts` or `import Harbor`; otherwise
/// `catch let error as HarborActorSystemError where error.code == .deadActor`.)
///
/// An error the remote function itself threw is not one of these when this
/// process can rebuild it: it is rethrown as itself
/// (``HarborActorSystem/registerErrorType(_:)``). Otherwise it arrives as
/// ``Code/remoteError``, with the thrown type's name and description.
///
/// **Thread safety:** any thread.
public struct HarborActorSystemError: HarborError, DistributedActorSystemError {
    /// What kind of failure this is.
    public struct Code: HarborErrorCode {
        public typealias Failure = HarborActorSystemError
        /// The code's name, as logs and the wire print it.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The actor is gone or cannot be reached: its port is dead (its
        /// process died, or the actor was released), or its process died
        /// with the call pending (the call's reply right died unanswered, a
        /// send-once notification), or the call could not be sent to it.
        /// Whether a pending call ran is not known.
        public static let deadActor = Code("dead actor")
        /// No actor answers to this name or ID here: harbord has no such
        /// name, or cannot be reached, or an ID of a local actor names one
        /// this system does not host.
        public static let actorNotFound = Code("actor not found")
        /// The actor has no distributed function by the call's target name
        /// (another build, or another actor type's function).
        public static let unknownTarget = Code("unknown target")
        /// The actor's system could not decode the invocation: a malformed
        /// body, arguments of other types or in another number.
        public static let invalidInvocation = Code("invalid invocation")
        /// The caller could not decode the answer: a malformed body, a
        /// result of another type, an answer a system does not send.
        public static let invalidReply = Code("invalid reply")
        /// An argument or a result could not be encoded (a limit of
        /// `HarborCoding`, a value's own `encode(to:)`).
        public static let encodingFailed = Code("encoding failed")
        /// The remote function threw an error this process cannot rethrow as
        /// itself (not `Codable`, or its type is not registered here).
        public static let remoteError = Code("remote error")
        /// The actor's name could not be served (harbord refused it).
        public static let serveFailed = Code("serve failed")
        /// This system was shut down (``HarborActorSystem/shutdown()``).
        public static let systemShutDown = Code("system shut down")
        /// The actor's system refused the call without running it: the
        /// caller's uid already keeps
        /// ``HarborActorSystem/runningCallsPerUid`` calls running there, or
        /// all callers ``HarborActorSystem/runningCallLimit``. The call
        /// may be made again once some of them answered.
        public static let busy = Code("busy")
        /// The call names generic substitutions the actor's system does not
        /// take (D09): a name that is not, byte for byte, the mangled name
        /// of a `Codable` type in that process, or one too long, or more or
        /// fewer substitutions than the function has generic parameters.
        /// Nothing was looked up past the first refused name, and the call
        /// did not run.
        public static let invalidSubstitution = Code("invalid substitution")

        /// The call was cancelled (D11): the caller's task was cancelled
        /// while it waited, the caller's system told the actor's, and the
        /// remote function ended by throwing `CancellationError` (as
        /// `Task.checkCancellation()` does). A function that returns
        /// despite the cancellation answers with its result instead.
        public static let cancelled = Code("cancelled")

        /// The actor's system refused the call unrun (D12): the calling
        /// process, as the kernel reports it, does not meet the system's
        /// ``HarborActorSystem/callerRequirement``.
        public static let callerRefused = Code("caller refused")

        static let all: [Code] = [.deadActor, .actorNotFound, .unknownTarget, .invalidInvocation, .invalidReply,
                                  .encodingFailed, .remoteError, .serveFailed, .systemShutDown, .busy,
                                  .invalidSubstitution, .cancelled, .callerRefused]

        /// The code named `description`, as a failure answer carries it.
        init?(named description: String) {
            guard let code = Self.all.first(where: { $0.description == description }) else { return nil }
            self = code
        }
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for logs saying what was being done (for
    /// ``Code/remoteError``, the thrown error's description).
    public let detail: String
    /// For ``Code/remoteError``: the name of the type the remote function
    /// threw.
    public let remoteType: String?

    init(_ code: Code, _ detail: String, remoteType: String? = nil) {
        self.code = code
        self.detail = detail
        self.remoteType = remoteType
    }
}
