// Harbor — version-0 sources: work another thread marks as pending.
import HarborPorts
import Synchronization
import HarborSystem

/// A source the loop runs when it has been signalled (CF's "version 0").
///
/// `signal()` marks the source pending from any thread; the loop notices at
/// its next pass. A loop that sleeps needs ``Loop/wakeUp()`` as well, or use
/// ``signalAndWakeUp()``, which does both. Pending sources run in ascending
/// ``order``, then in the order they were signalled. Running one counts as
/// "handled source" (it ends ``Loop/run(mode:before:)``).
///
/// A source keeps a mode alive: a mode holding one is not empty, even if it
/// is never signalled (``LoopWorker`` uses exactly that).
///
/// **Cost:** `signal()` is two atomic stores; the loop looks at each of the
/// mode's sources under its lock once per pass.
/// **Thread safety:** every method, any thread. The handler runs on the
/// loop's thread with no lock held.
/// **CF equivalent:** `CFRunLoopSourceCreate` with a version-0 context,
/// `CFRunLoopSourceSignal`, `CFRunLoopSourceInvalidate`.
public final class LoopSource: Sendable, CustomStringConvertible {
    /// Sources with a lower order run first. Fixed at creation, as in CF.
    public let order: Int
    let handler: @Sendable (LoopSource) -> Void
    let label: String
    let membership = HarborLock(Memberships())
    private let valid = Atomic(true)
    private let pending = Atomic(false)
    /// When it was last signalled, for ordering sources of equal `order`.
    let signalStamp = Atomic<UInt64>(0)

    private static let stamps = Atomic<UInt64>(0)

    /// A source that calls `handler` on its loop's thread each time it runs.
    /// - Parameters:
    ///   - order: lower runs first; default 0.
    ///   - label: a name for ``Loop/description``.
    ///   - handler: the source's work, on its loop's thread.
    public convenience init(order: Int = 0, label: String = "source", _ handler: @escaping @Sendable () -> Void) {
        self.init(order: order, label: label) { _ in handler() }
    }

    /// A source whose handler gets the source itself, as CF's perform
    /// callout gets its `info`: it can invalidate or re-signal itself with
    /// no box filled in after creation.
    /// **CF equivalent:** `CFRunLoopSourceCreate` with a context whose `info` is the source.
    public init(order: Int = 0, label: String = "source", _ handler: @escaping @Sendable (LoopSource) -> Void) {
        self.order = order
        self.label = label
        self.handler = handler
    }

    /// Marks the source pending; the loop runs it at its next pass.
    /// Does not wake a sleeping loop (see ``signalAndWakeUp()``).
    public func signal() {
        signalStamp.store(Self.stamps.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
        pending.store(true, ordering: .releasing)
    }

    /// Signals the source and wakes every loop it is in (the first to pass
    /// runs it). CF: `CFRunLoopSourceSignal` followed by `CFRunLoopWakeUp`.
    public func signalAndWakeUp() {
        signal()
        for loop in membership.withLock({ $0.loops }) { loop.wakeUp() }
    }

    /// Whether the source is signalled and has not run since.
    public var isSignalled: Bool { pending.load(ordering: .acquiring) }

    /// Takes the pending mark; true if it was set.
    func takeSignal() -> Bool { pending.exchange(false, ordering: .acquiringAndReleasing) }

    /// False once ``invalidate()`` ran.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes the source from every mode of every loop it is in; it never
    /// runs again.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for loop in membership.withLock({ $0.loops }) { loop.removeEverywhere(.source(self)) }
    }

    public var description: String {
        "LoopSource(\(label), order: \(order), signalled: \(isSignalled), valid: \(isValid))"
    }
}
