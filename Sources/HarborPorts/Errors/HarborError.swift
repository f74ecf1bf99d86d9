// Harbor — the shape every Harbor error shares: an extensible code and a sentence.
import HarborSystem

/// An error made of a ``code`` (what kind of failure: extensible, so codes can
/// be added without breaking clients, unlike an enum's cases) and a
/// ``detail`` sentence saying what was being done. ``PortError``, and the
/// run loop's, systemd's and the name server's errors, are all of this shape.
///
/// The protocol gives them their description (`code: detail`) and, through
/// ``HarborErrorCode``, their `catch` pattern:
///
/// ```swift
/// do { try send.send(message, timeout: .zero) }
/// catch PortError.Code.queueFull { … }
/// ```
public protocol HarborError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    associatedtype Code: HarborErrorCode where Code.Failure == Self
    /// What kind of failure this is.
    var code: Code { get }
    /// A sentence for logs saying what was being done.
    var detail: String { get }
}

extension HarborError {
    /// `code: detail`.
    public var description: String { "\(code): \(detail)" }
}

/// The code of a ``HarborError``: a named kind of failure, compared by its
/// name, that matches a thrown error of its kind in a `catch`.
public protocol HarborErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The error type whose ``HarborError/code`` this is.
    associatedtype Failure: HarborError where Failure.Code == Self
}

extension HarborErrorCode {
    /// Lets `catch PortError.Code.deadName` match a thrown ``PortError``
    /// whose code this is (and likewise for every Harbor error).
    public static func ~= (pattern: Self, error: any Error) -> Bool {
        (error as? Failure)?.code == pattern
    }
}
