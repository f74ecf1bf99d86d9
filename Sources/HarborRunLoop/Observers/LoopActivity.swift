// Harbor — the moments of a run-loop pass an observer can watch.

/// The stages of a run that observers are told about.
///
/// One run notifies `entry`, then per iteration `beforeTimers`,
/// `beforeSources`, and — only when it is about to sleep — `beforeWaiting`
/// and `afterWaiting`; finally `exit`.
///
/// **CF equivalent:** `CFRunLoopActivity` (`kCFRunLoopEntry` …).
public struct LoopActivity: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bits, as in the C mask.
    public let rawValue: UInt32
    /// A set made of the given bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The run starts (once per run). CF: `kCFRunLoopEntry`.
    public static let entry = LoopActivity(rawValue: 1 << 0)
    /// Timers are about to be considered. CF: `kCFRunLoopBeforeTimers`.
    public static let beforeTimers = LoopActivity(rawValue: 1 << 1)
    /// Version-0 sources are about to run. CF: `kCFRunLoopBeforeSources`.
    public static let beforeSources = LoopActivity(rawValue: 1 << 2)
    /// The thread is about to sleep. CF: `kCFRunLoopBeforeWaiting`.
    public static let beforeWaiting = LoopActivity(rawValue: 1 << 5)
    /// The thread woke up. CF: `kCFRunLoopAfterWaiting`.
    public static let afterWaiting = LoopActivity(rawValue: 1 << 6)
    /// The run returns (once per run). CF: `kCFRunLoopExit`.
    public static let exit = LoopActivity(rawValue: 1 << 7)
    /// Every activity. CF: `kCFRunLoopAllActivities`.
    public static let all: LoopActivity = [.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]

    public var description: String {
        let names: [(LoopActivity, String)] = [
            (.entry, "entry"), (.beforeTimers, "beforeTimers"), (.beforeSources, "beforeSources"),
            (.beforeWaiting, "beforeWaiting"), (.afterWaiting, "afterWaiting"), (.exit, "exit"),
        ]
        let parts = names.filter { contains($0.0) }.map(\.1)
        return parts.count == 1 ? parts[0] : "[" + parts.joined(separator: ", ") + "]"
    }
}
