// Harbor — the name server's errors: a struct with an extensible code, like PortError.
import HarborPorts

/// Why a bootstrap request failed.
///
/// `code` says what kind of failure (match it with `catch BootstrapError.Code.notFound`),
/// `detail` says what happened in a sentence, `underlying` holds the port
/// error when the transport failed. Codes are static members, not enum
/// cases, so new ones do not break clients.
///
/// **Darwin equivalent:** the `BOOTSTRAP_*` return codes of `bootstrap.h`
/// (`BOOTSTRAP_UNKNOWN_SERVICE`, `BOOTSTRAP_NAME_IN_USE`,
/// `BOOTSTRAP_SERVICE_ACTIVE`, `BOOTSTRAP_NOT_PRIVILEGED`, `BOOTSTRAP_NO_MEMORY`).
public struct BootstrapError: HarborError {
    /// The kind of failure. Codes 1–99 travel on the wire (the reply's id).
    public struct Code: HarborErrorCode {
        public typealias Failure = BootstrapError
        /// The number the code has on the wire.
        public let rawValue: Int32
        init(_ rawValue: Int32) { self.rawValue = rawValue }

        /// No such name in the caller's scope or among shared names. `BOOTSTRAP_UNKNOWN_SERVICE`.
        public static let notFound = Code(1)
        /// The name is already registered. `BOOTSTRAP_NAME_IN_USE`.
        public static let nameInUse = Code(2)
        /// The name is already checked in by a live holder. `BOOTSTRAP_SERVICE_ACTIVE`.
        public static let alreadyActive = Code(3)
        /// The caller's uid may not do this (check in another user's shared name). `BOOTSTRAP_NOT_PRIVILEGED`.
        public static let notPermitted = Code(4)
        /// The name is empty, too long, or has characters outside `A–Z a–z 0–9 . _ - : @`.
        public static let invalidName = Code(5)
        /// The request itself was malformed (unknown id, missing right or reply right).
        public static let badRequest = Code(6)
        /// The caller's uid is at one of its limits (names, clients, sessions,
        /// waiting messages, descriptors: Docs/harbord.md); others are unaffected.
        /// `BOOTSTRAP_NO_MEMORY`.
        public static let overQuota = Code(7)
        /// Kept for the wire's numbering: no request returns it since look-ups
        /// stopped depending on the holder (the server answers them itself).
        public static let busy = Code(8)
        /// The name server could not be reached (no socket, refused, it died).
        public static let unreachable = Code(100)
        /// No reply came in time.
        public static let timedOut = Code(101)
        /// A reply did not decode.
        public static let badReply = Code(102)

        /// The code a reply id stands for (unknown numbers become ``badReply``).
        package static func fromWire(_ value: Int32) -> Code {
            (1...8).contains(value) ? Code(value) : .badReply
        }

        public var description: String {
            switch rawValue {
            case 1: "not found"
            case 2: "name in use"
            case 3: "already checked in"
            case 4: "not permitted"
            case 5: "invalid name"
            case 6: "bad request"
            case 7: "over quota"
            case 8: "holder busy"
            case 100: "name server unreachable"
            case 101: "timed out"
            case 102: "bad reply"
            default: "code \(rawValue)"
            }
        }
    }

    /// What kind of failure.
    public let code: Code
    /// One sentence on what happened.
    public let detail: String
    /// The port error, when the transport failed.
    public let underlying: PortError?

    /// Makes an error.
    public init(_ code: Code, _ detail: String, underlying: PortError? = nil) {
        self.code = code
        self.detail = detail
        self.underlying = underlying
    }
}
