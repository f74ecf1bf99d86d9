// Harbor — the part of a loop other threads may touch, kept under one lock.
import DequeModule
import HarborPorts
import HarborSystem

/// A block posted with ``Loop/perform(_:)`` and its modes.
struct PendingBlock {
    enum Modes {
        /// Runs in any mode that is common at the time the block runs.
        case common
        case one(LoopMode)
        case some([LoopMode])
    }

    var sequence: UInt64
    var modes: Modes
    var block: @Sendable () -> Void
    /// Set for `performAndWait`: told whether the block ran.
    var completion: BlockCompletion?

    func runs(in mode: ModeState) -> Bool {
        switch modes {
        case .common: mode.isCommon
        case .one(let name): name == mode.name
        case .some(let names): names.contains(mode.name) || (mode.isCommon && names.contains(.common))
        }
    }
}

/// The loop's cross-thread state. Every field is guarded by `Loop.state`.
struct LoopState: ~Copyable {
    /// nil once the loop's thread has exited.
    var wakeUp: WakeUpCounter? = WakeUpCounter()
    var modes: [LoopMode: ModeState] = [:]
    /// The common set, in the order modes joined it.
    var commonModes: [LoopMode] = [.default]
    /// Items added "for common", added again to each mode joining the set.
    var commonItems: [LoopItem] = []
    /// Timers added "for common", the same (`Timers/Loop+Timers.swift`).
    var commonTimers: [LoopTimer] = []
    var blocks = Deque<PendingBlock>()
    var nextBlockSequence: UInt64 = 0
    var stopRequested = false
    var isWaiting = false
    /// The modes of the runs in progress, innermost last.
    var modeStack: [LoopMode] = []
    /// Every waitset source in one of the loop's modes, by its token's slot.
    var waitSlots = SlotTable<any WaitsetSource>()
    var terminated = false
    /// The mode `mode(_:)` returned last (dropped with the modes at teardown).
    var lastMode: ModeState?

    init() {
        let wake = wakeUp!.counter.rawValue
        let defaultMode = ModeState(name: .default, wakeDescriptor: wake)
        defaultMode.isCommon = true
        modes[.default] = defaultMode
    }

    /// The mode called `name`, created on first use.
    mutating func mode(_ name: LoopMode) -> ModeState {
        // Most adds name the mode the previous one did: a short string
        // compare instead of hashing the name.
        if let last = lastMode, last.name == name { return last }
        let mode: ModeState
        if let existing = modes[name] {
            mode = existing
        } else {
            mode = ModeState(name: name, wakeDescriptor: wakeUp?.counter.rawValue ?? -1)
            mode.isCommon = commonModes.contains(name)
            modes[name] = mode
        }
        lastMode = mode
        return mode
    }

    /// Wakes the loop if it sleeps. The eventfd write is the one system call
    /// made under the lock: it is non-blocking, and doing it here means a
    /// wake-up can never be lost between "loop decides to sleep" and
    /// "loop sleeps" (the loop sets `isWaiting` under this same lock).
    func wakeIfWaiting() {
        if isWaiting { wakeUp?.counter.signal() }
    }

    /// The wake-up eventfd if the loop sleeps, for the caller to signal
    /// after unlocking — the cross-thread hot paths (`perform`, `wakeUp`,
    /// `stop`) do that: signalling under the lock let the woken loop thread,
    /// on the same CPU, preempt the poster inside its critical section and
    /// then block on the lock its poster still held (34 × the floor per
    /// perform round trip). Nothing is lost by writing late: the loop never
    /// reads this eventfd, and each write queues a fresh edge-triggered event
    /// whether `epoll_wait` has started yet or not. The returned reference
    /// keeps the descriptor open even if the thread exits meanwhile.
    func wakeUpIfWaiting() -> WakeUpCounter? {
        isWaiting ? wakeUp : nil
    }
}

/// Lets `performAndWait` sleep until its block ran (or was dropped).
final class BlockCompletion: Sendable {
    private let parker = Parker()
    private let outcome = HarborLock<Bool?>(nil)

    func finish(ran: Bool) {
        outcome.withLock { $0 = ran }
        parker.unpark()
    }

    /// Waits; true if the block ran, false if its loop died first.
    func wait() -> Bool {
        while true {
            if let ran = outcome.withLock({ $0 }) { return ran }
            _ = parker.park(until: .never)
        }
    }
}
