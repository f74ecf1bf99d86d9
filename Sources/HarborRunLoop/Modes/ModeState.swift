// Harbor — one mode of one loop: its items and its waitset.
import HarborPorts
import HarborSystem
import Synchronization

/// Everything a loop keeps per mode.
///
/// The waitset is the mode's own epoll set, as in CF: waiting only on the
/// running mode's set is what keeps a level-triggered source of another mode
/// from spinning the loop. The loop's wake-up eventfd (edge-triggered) and
/// the mode's timerfd are in the set from the start.
final class ModeState: @unchecked Sendable {
    // @unchecked: every `var` is read and written only while the owning
    // loop's `state` lock is held (`armedDeadline`: by the loop's own
    // thread); the `let`s are immutable after init.
    // @exclusivity(unchecked): that lock already keeps accesses apart, and
    // the runtime check cost a call pair and a thread-local lookup on each
    // of a pass's reads (ModeTimers does the same).

    let name: LoopMode
    let epoll: Epoll
    let timerDescriptor: TimerDescriptor
    /// Whether the mode is in the loop's common set (blocks posted "for
    /// common" run here).
    @exclusivity(unchecked) var isCommon = false
    /// Version-0 sources.
    @exclusivity(unchecked) var sources: [LoopSource] = []
    /// Port, descriptor, process and signal sources, sorted by `order`.
    @exclusivity(unchecked) var waitSources: [any WaitsetSource] = []
    /// Whether libdispatch's main-queue eventfd is in this mode's waitset
    /// (main loop, common modes only; see Loop+Dispatch.swift).
    @exclusivity(unchecked) var watchesMainQueue = false
    /// The mode's timers; the object is fixed, its contents change under the lock.
    let timers: ModeTimers
    /// Sorted by `order`; equal orders keep the order they were added in.
    @exclusivity(unchecked) var observers: [LoopObserver] = []
    /// Union of the observers' activities (`LoopActivity` bits): skips the
    /// observer pass without the lock. Written under the lock (with
    /// `observers`), read by the loop's thread before it takes the lock.
    let observerMask = Atomic<UInt32>(0)
    /// The deadline the timerfd is armed to (CLOCK_MONOTONIC ns), or nil.
    /// Written only by the loop's own thread.
    @exclusivity(unchecked) var armedDeadline: Int64?

    /// Makes the epoll set and timerfd. Traps if the kernel refuses, as CF
    /// does when it cannot allocate a mode's port set or timer port.
    init(name: LoopMode, wakeDescriptor: CInt) {
        self.name = name
        timers = ModeTimers(mode: name)
        do {
            epoll = try Epoll()
            timerDescriptor = try TimerDescriptor()
            try epoll.add(wakeDescriptor, events: [.readable, .edgeTriggered], token: WaitToken.wakeUp.rawValue)
            try epoll.add(timerDescriptor.rawValue, events: .readable, token: WaitToken.timer.rawValue)
        } catch {
            preconditionFailure("Harbor: cannot create the waitset of run-loop mode \(name): \(error)")
        }
    }

    /// A mode with no source and no timer is empty: running it finishes at
    /// once. Observers do not count.
    var hasSourcesOrTimers: Bool { !sources.isEmpty || !waitSources.isEmpty || !timers.isEmpty }

    func recomputeObserverMask() {
        let mask = observers.reduce(into: LoopActivity()) { $0.formUnion($1.activities) }
        observerMask.store(mask.rawValue, ordering: .releasing)
    }

    /// Whether some observer of the mode watches `activity` (the lock need
    /// not be held: an observer added on another thread as the loop reaches
    /// `activity` is seen from this activity or from its next).
    func isObserved(_ activity: LoopActivity) -> Bool {
        observerMask.load(ordering: .acquiring) & activity.rawValue != 0
    }
}

/// The loop's wake-up eventfd, in a class so the loop's state can drop it
/// (closing it) when the thread exits.
final class WakeUpCounter: Sendable {
    let counter: EventDescriptor
    init() {
        do { counter = try EventDescriptor() } catch {
            preconditionFailure("Harbor: cannot create a run loop's wake-up eventfd: \(error)")
        }
    }
}
