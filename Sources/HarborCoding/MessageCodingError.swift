// Harbor — the typed error of encoding a value into a message and decoding it back.
import HarborPorts

/// Why a value could not be encoded into a `Message`, or a
/// message's body could not be decoded as a value.
///
/// Every failure of ``MessageDecoder`` on bytes from another process is one
/// of these, never a trap: a body that is truncated, over a limit, of an
/// unknown version, names a carried right or region that is not there (or
/// names one twice), or does not have the shape the decoded type asks for.
///
/// ```swift
/// do { let request = try MessageDecoder().decode(Request.self, from: &message) }
/// catch MessageCodingError.Code.malformedBody { … }
/// ```
///
/// **Thread safety:** any thread.
public struct MessageCodingError: HarborError {
    /// What kind of failure this is.
    public struct Code: HarborErrorCode {
        public typealias Failure = MessageCodingError
        /// The code's name, as logs print it.
        public let description: String
        private init(_ description: String) { self.description = description }

        /// The body's bytes do not follow the format (Docs/Coding.md): an
        /// unknown tag, a length past the end, a varint longer than 64 bits,
        /// invalid UTF-8, a key twice in one keyed container, bytes after the value.
        public static let malformedBody = Code("malformed body")
        /// The body's version byte is not one this decoder reads.
        public static let unsupportedVersion = Code("unsupported version")
        /// A limit was reached: the body's size, the nesting depth, the
        /// number of carried rights or of out-of-line regions
        /// (``MessageCodingFormat``).
        public static let limitExceeded = Code("limit exceeded")
        /// The body names a carried right or region that is out of range, of
        /// another kind, already taken out of the message, or named twice.
        public static let invalidRightIndex = Code("invalid right index")
        /// A ``ReceiveRightCarrier`` or ``SendOnceRightCarrier`` was asked for
        /// its right a second time, or encoded after its right was taken.
        public static let rightAlreadyTaken = Code("right already taken")
        /// The body holds a value of another type than the one asked for
        /// (a string where an integer is expected, a right of another kind).
        public static let typeMismatch = Code("type mismatch")
        /// A keyed container lacks a key the type requires.
        public static let keyNotFound = Code("key not found")
        /// The body holds nil (or an array ended) where a value is required.
        public static let valueNotFound = Code("value not found")
        /// A value is out of its type's range (an integer too large for
        /// `Int8`), or the type's own `init(from:)` called it corrupted.
        public static let dataCorrupted = Code("data corrupted")
        /// A value cannot be encoded here (a right or region given to
        /// another encoder than ``MessageEncoder``, a float that is not
        /// finite where the type refuses it), or the value's own
        /// `encode(to:)` or `init(from:)` threw (``underlying``).
        public static let invalidValue = Code("invalid value")
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for logs saying what was being done.
    public let detail: String
    /// The keys and indices from the top-level value down to where it failed.
    public let codingPath: [String]
    /// The error a value's own `encode(to:)` or `init(from:)` threw, when it
    /// was not one of the coder's own.
    public let underlying: (any Error)?

    package init(_ code: Code, _ detail: String, codingPath: [any CodingKey] = [], underlying: (any Error)? = nil) {
        self.code = code
        self.detail = detail
        self.codingPath = codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        self.underlying = underlying
    }

    /// `code: detail (at path)`.
    public var description: String {
        var text = "\(code): \(detail)"
        if !codingPath.isEmpty { text += " (at \(codingPath.joined(separator: ".")))" }
        if let underlying { text += " (\(underlying))" }
        return text
    }
}
