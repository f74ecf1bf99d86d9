// Harbor — bytes that are not a Harbor capture record.

/// A capture record (``CaptureRecordFormat``) that could not be read: too
/// short, another version, or lengths that do not add up.
public struct CaptureFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, in one line.
    public let description: String

    init(_ description: String) { self.description = description }
}
