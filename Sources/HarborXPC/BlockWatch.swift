// HarborXPC — noticing a block that a run loop dropped unrun (HandlerRunner.swift).
import HarborSystem

/// Calls its `dropped` closure when it goes without ``run(_:)`` having
/// been called: captured by a block posted to a run loop, it says when the
/// loop's thread ended and released the block unrun (`Loop.perform` does
/// not say), so the poster need not wait for the block (as
/// `Loop.performAndWait` would) to know.
final class BlockWatch: Sendable {
    private let ran = HarborLock(false)
    private let dropped: @Sendable () -> Void

    init(dropped: @escaping @Sendable () -> Void) { self.dropped = dropped }

    /// Runs `body`, marking the block run.
    func run(_ body: () -> Void) {
        ran.withLock { $0 = true }
        body()
    }

    deinit {
        if !ran.withLock({ $0 }) { dropped() }
    }
}
