// Harbor — why one run of a loop returned.

/// Why ``Loop/run(mode:timeout:returnAfterSourceHandled:)`` returned.
///
/// When several apply, the first in this order wins, as on Darwin:
/// `handledSource` (only when asked to return after one), `timedOut`,
/// `stopped`, `finished`.
///
/// **CF equivalent:** `CFRunLoopRunResult` (`kCFRunLoopRunFinished` …).
public enum LoopRunResult: Sendable, Hashable, CustomStringConvertible {
    /// The mode had no sources and no timers left (or was `.common`, or
    /// never existed). Observers do not count.
    case finished
    /// ``Loop/stop()`` ended the run.
    case stopped
    /// The timeout passed.
    case timedOut
    /// A source (a version-0 source, a port message or a performed block)
    /// was handled and the caller asked to return after one.
    case handledSource

    public var description: String {
        switch self {
        case .finished: "finished"
        case .stopped: "stopped"
        case .timedOut: "timedOut"
        case .handledSource: "handledSource"
        }
    }
}
