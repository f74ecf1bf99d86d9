// Harbor — the name of a run-loop mode.

/// The name of a run-loop mode: a set of sources, timers and observers the
/// loop watches while it runs "in" that mode.
///
/// `.default` always exists. Any other name comes into being the first time
/// something is added to it (or it joins the common set). `.common` is not a
/// mode but stands for the loop's set of common modes (see
/// ``Loop/addCommonMode(_:)``).
///
/// Comparing two modes compares their names: cheap for the short names modes
/// usually have (Swift stores up to 15 UTF-8 bytes inline).
///
/// **Thread safety:** a value; any thread.
/// **CF equivalent:** `CFRunLoopMode` (a `CFStringRef`), `NSRunLoopMode`.
public struct LoopMode: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral, RawRepresentable {
    /// The mode's name.
    public let name: String

    /// The mode's name, as `NSRunLoop.Mode`'s `rawValue` is its string.
    /// **CF equivalent:** the mode's `CFStringRef` itself.
    public var rawValue: String { name }

    /// The mode named `rawValue`; never fails (any string names a mode).
    /// **CF equivalent:** `NSRunLoop.Mode(rawValue:)`.
    public init(rawValue: String) { self.name = rawValue }

    /// A mode named `name`. Custom modes need no registration.
    public init(_ name: String) { self.name = name }

    /// Lets `"tracking"` stand for `LoopMode("tracking")`.
    public init(stringLiteral name: String) { self.name = name }

    /// The mode a loop runs in unless told otherwise; it always exists.
    /// **CF equivalent:** `kCFRunLoopDefaultMode`, `NSDefaultRunLoopMode`.
    public static let `default` = LoopMode("default")

    /// The loop's set of common modes, not a mode of its own. Adding an item
    /// "for common" adds it to every common mode, now and later; running in
    /// it returns ``LoopRunResult/finished`` at once.
    /// **CF equivalent:** `kCFRunLoopCommonModes`, `NSRunLoopCommonModes`.
    public static let common = LoopMode("common")

    public var description: String { name }
}
