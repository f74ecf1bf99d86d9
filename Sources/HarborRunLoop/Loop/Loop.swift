// Harbor — the run loop object: one per thread, found through `current` and `main`.
import DequeModule
import HarborPorts
import Synchronization
import HarborSystem

/// A CFRunLoop-style event loop: it keeps a thread alive, sleeps in one
/// `epoll_wait` when idle, and wakes for port messages, timers, signalled
/// sources and posted work.
///
/// Each thread has at most one loop, made the first time the thread asks for
/// ``current``; ``main`` is the main thread's loop (the thread whose kernel
/// id equals the process id), reachable from any thread. A loop is torn down
/// when its thread exits: its modes, descriptors and items are released.
///
/// Every method may be called from any thread, except running the loop,
/// which only its own thread may do (a `precondition`, as Apple traps too).
///
/// **CF equivalent:** `CFRunLoopRef` (`NSRunLoop` minus its thread-unsafety).
public final class Loop: Sendable {
    let state: HarborLock<LoopState>
    /// The owning thread's ``SystemThread/id``; 0 until claimed (the main
    /// loop may be made from another thread before the main thread asks).
    let owner: Atomic<UInt>
    /// The owner's kernel thread id, for descriptions and messages (0 for a
    /// ``LoopThread``'s loop until its thread starts).
    var threadID: Int32 { storedThreadID.load(ordering: .relaxed) }
    private let storedThreadID: Atomic<Int32>
    /// Whether this is the main thread's loop.
    public let isMain: Bool
    /// Per-nesting-depth event buffers; touched only by the loop's thread.
    let frames = FrameBuffers()

    init(owner: SystemThread?, threadID: Int32, isMain: Bool) {
        state = HarborLock(LoopState())
        self.owner = Atomic(owner?.id ?? 0)
        storedThreadID = Atomic(threadID)
        self.isMain = isMain
    }

    /// The calling thread's loop, created on first access.
    ///
    /// **Cost:** one `pthread_getspecific` after the first call.
    /// **CF equivalent:** `CFRunLoopGetCurrent`, `NSRunLoop.currentRunLoop`.
    public static var current: Loop {
        if let existing = loopKey.value {
            return Unmanaged<Loop>.fromOpaque(existing).takeUnretainedValue()
        }
        let loop: Loop
        if SystemThread.isMainThread {
            loop = main
            loop.owner.store(SystemThread.current.id, ordering: .releasing)
        } else {
            loop = Loop(owner: .current, threadID: SystemThread.kernelID, isMain: false)
        }
        // The thread-specific slot holds one reference; its destructor tears
        // the loop down when the thread exits.
        loopKey.set(Unmanaged.passRetained(loop).toOpaque())
        return loop
    }

    /// The main thread's loop, from any thread. **CF equivalent:** `CFRunLoopGetMain`.
    public static var main: Loop {
        mainLoop.withLock { stored in
            if let stored { return stored }
            let made = Loop(owner: nil, threadID: ProcessControl.processID, isMain: true)
            stored = made
            return made
        }
    }

    /// Makes `loop`, made before its thread existed (``LoopThread``), the
    /// calling thread's ``current`` loop. Called first thing on that thread.
    static func adopt(_ loop: Loop) {
        precondition(loopKey.value == nil, "Harbor: a thread adopting a loop already has one")
        loop.storedThreadID.store(SystemThread.kernelID, ordering: .relaxed)
        loop.owner.store(SystemThread.current.id, ordering: .releasing)
        loopKey.set(Unmanaged.passRetained(loop).toOpaque())
    }

    /// Whether the calling thread owns this loop (and so may run it).
    public var isCurrent: Bool {
        let me = SystemThread.current.id
        let claimed = owner.load(ordering: .acquiring)
        if claimed == me { return true }
        if claimed == 0 && isMain && SystemThread.isMainThread {
            owner.store(me, ordering: .releasing)
            return true
        }
        return false
    }

    func preconditionOnOwnThread(_ what: StaticString) {
        precondition(isCurrent, "Harbor: \(what) called on thread \(SystemThread.kernelID), but this loop belongs to thread \(threadID); only a loop's own thread may run it")
    }

    /// The innermost mode the loop is running in; nil when it is not running.
    /// **CF equivalent:** `CFRunLoopCopyCurrentMode`.
    public var currentMode: LoopMode? { state.withLock { $0.modeStack.last } }

    /// Whether the loop is asleep in `epoll_wait`. **CF equivalent:** `CFRunLoopIsWaiting`.
    public var isWaiting: Bool { state.withLock { $0.isWaiting } }

    /// Every mode that exists (default plus those created by use).
    /// **CF equivalent:** `CFRunLoopCopyAllModes`.
    public var allModes: [LoopMode] {
        state.withLock { state in state.modes.keys.sorted { $0.name < $1.name } }
    }

    /// Makes the innermost running pass return ``LoopRunResult/stopped``.
    /// A loop that is not running ignores it, and each run starts with its
    /// own cleared stop flag, so a stop never outlives the run it was sent
    /// to (as in CF: the flag lives in the run's per-run data). To stop a
    /// loop that may be between runs, post the stop: `loop.perform { loop.stop() }`.
    /// Any thread. **CF equivalent:** `CFRunLoopStop`.
    public func stop() {
        let wake = state.withLock { state -> WakeUpCounter? in
            guard !state.modeStack.isEmpty else { return nil }
            state.stopRequested = true
            return state.wakeUp
        }
        wake?.counter.signal()  // after unlocking: see `LoopState.wakeUpIfWaiting`
    }

    /// Ends the loop's sleep, if it sleeps; it then runs one more pass.
    /// Any thread. **Cost:** one eventfd write. **CF equivalent:** `CFRunLoopWakeUp`.
    public func wakeUp() {
        state.withLock { $0.wakeUp }?.counter.signal()  // after unlocking: see `LoopState.wakeUpIfWaiting`
    }

    /// Called when the owning thread exits: drops every mode (closing its
    /// epoll set and timerfd, releasing its items) and the wake-up eventfd,
    /// and fails pending `performAndWait` calls.
    func terminate() {
        let (modes, blocks, items, timers, wake) = state.withLock { state in
            state.terminated = true
            defer {
                state.modes = [:]
                state.lastMode = nil
                state.blocks = []
                state.commonItems = []
                state.commonTimers = []
                state.waitSlots = SlotTable()
            }
            return (state.modes, state.blocks, state.commonItems, state.commonTimers, state.wakeUp.take())
        }
        // Its items forget it, so another loop can take them (CF moves a
        // source whose loop has gone); their slots went with its table.
        for mode in modes.values {
            for item in mode.allItems { item.leave(self) }
            releaseTimers(mode.timers.all)
        }
        for item in items { item.leave(self) }
        releaseTimers(timers)
        for pending in blocks { pending.completion?.finish(ran: false) }
        _ = wake  // released here, outside the lock: closes the eventfd
    }

    /// Whether the loop's thread has exited.
    public var isTerminated: Bool { state.withLock { $0.terminated } }
}

extension ModeState {
    /// Every item of the mode (timers are not items: see `Loop+Timers`).
    var allItems: [LoopItem] {
        sources.map { .source($0) } + waitSources.map { .waitset($0) } + observers.map { .observer($0) }
    }
}

/// The main loop, made by whichever thread asks first.
private let mainLoop = HarborLock<Loop?>(nil)

/// The thread-specific key holding each thread's loop; its destructor tears
/// the loop down when the thread exits.
private let loopKey = ThreadLocalKey { pointer in
    guard let pointer else { return }
    let loop = Unmanaged<Loop>.fromOpaque(pointer).takeRetainedValue()
    loop.terminate()
}

/// Event buffers for `epoll_wait`, one per nesting depth, so a run nested
/// in a callout never overwrites the events its outer run is still handling.
final class FrameBuffers: @unchecked Sendable {
    // @unchecked: used only by the loop's own thread (every run checks
    // `preconditionOnOwnThread` first).
    static let capacity = 64
    private var buffers: [UnsafeMutableBufferPointer<EpollEvent>] = []
    /// Per depth, the storage step 7 sorts ready sources in (empty between passes).
    private var readyLists: [[ReadySource]] = []
    var depth = 0

    /// The depth's (empty) ready list with its storage, moved out so that
    /// appending to it does not copy it.
    func takeReadyList(at depth: Int) -> [ReadySource] {
        while readyLists.count <= depth { readyLists.append([]) }
        var list: [ReadySource] = []
        swap(&list, &readyLists[depth])
        return list
    }

    /// Gives an emptied list back for the next pass at `depth`.
    func putReadyList(_ list: [ReadySource], at depth: Int) {
        readyLists[depth] = list
    }

    func buffer(at depth: Int) -> UnsafeMutableBufferPointer<EpollEvent> {
        while buffers.count <= depth {
            buffers.append(.allocate(capacity: Self.capacity))
        }
        return buffers[depth]
    }

    /// Replaces the buffer at `depth` with one twice as large (up to
    /// ``maximumCapacity``), once its contents have been handled.
    func grow(at depth: Int) -> UnsafeMutableBufferPointer<EpollEvent> {
        let old = buffers[depth]
        guard old.count < Self.maximumCapacity else { return old }
        old.deallocate()
        buffers[depth] = .allocate(capacity: min(old.count * 2, Self.maximumCapacity))
        return buffers[depth]
    }

    /// At most this many events per `epoll_wait`; a full buffer doubles up to here.
    static let maximumCapacity = 4096

    deinit {
        for buffer in buffers { buffer.deallocate() }
    }
}
