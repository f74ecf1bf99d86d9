// Harbor — observers: callbacks at fixed points of every pass.
import HarborPorts
import Synchronization
import HarborSystem

/// A callback the loop calls at the activities it asked for.
///
/// Observers of one mode are called in ascending ``order`` (`Int.min` first,
/// `Int.max` last — the slot a per-pass clean-up uses, like the autorelease
/// pool observers on Darwin). A non-repeating observer is invalidated after
/// its first callout returns (it is still valid inside it), and an observer
/// is never called again while its callout runs (a nested run skips it), as
/// in CF. Observers do not keep a mode alive.
///
/// **Cost:** nothing while no observer of the running mode wants the
/// activity (a mask test); otherwise one lock and one array per activity.
/// **Thread safety:** any thread; the handler runs on the loop's thread with
/// no lock held.
/// **CF equivalent:** `CFRunLoopObserverCreate`, `CFRunLoopAddObserver`.
public final class LoopObserver: Sendable, CustomStringConvertible {
    /// Which activities the observer wants.
    public let activities: LoopActivity
    /// Whether it stays after its first call.
    public let repeats: Bool
    /// Lower orders are called first.
    public let order: Int
    let handler: @Sendable (LoopObserver, LoopActivity) -> Void
    let membership = HarborLock(Memberships())
    private let valid = Atomic(true)
    /// Set while its callout runs (CF's "firing" bit): a run nested in the
    /// callout does not call it again.
    private let firing = Atomic(false)

    /// An observer of `activities` that calls `handler` with the activity.
    public convenience init(
        activities: LoopActivity, repeats: Bool = true, order: Int = 0,
        _ handler: @escaping @Sendable (LoopActivity) -> Void
    ) {
        self.init(activities: activities, repeats: repeats, order: order) { _, activity in handler(activity) }
    }

    /// An observer of `activities` whose handler gets the observer itself
    /// with the activity, as CF's callout does: it can invalidate itself, or
    /// read its order, with no box filled in after creation.
    /// **CF equivalent:** `CFRunLoopObserverCreateWithHandler`, whose block
    /// receives `(CFRunLoopObserverRef, CFRunLoopActivity)`.
    public init(
        activities: LoopActivity, repeats: Bool = true, order: Int = 0,
        _ handler: @escaping @Sendable (LoopObserver, LoopActivity) -> Void
    ) {
        self.activities = activities
        self.repeats = repeats
        self.order = order
        self.handler = handler
    }

    /// False once invalidated (by ``invalidate()`` or after the only call of
    /// a non-repeating observer).
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes the observer from every mode of its loop. CF: `CFRunLoopObserverInvalidate`.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for loop in membership.withLock({ $0.loops }) { loop.removeEverywhere(.observer(self)) }
    }

    /// Marks the observer as firing; false if it already was.
    func beginFiring() -> Bool {
        !firing.exchange(true, ordering: .acquiringAndReleasing)
    }

    func endFiring() {
        firing.store(false, ordering: .releasing)
    }

    public var description: String {
        "LoopObserver(activities: \(activities), order: \(order), repeats: \(repeats))"
    }
}
