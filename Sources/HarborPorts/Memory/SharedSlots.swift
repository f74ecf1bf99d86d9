// Harbor — a port's queue slots, shared by the receiver and every sending process.
//
// Back-pressure across processes: a sender blocks iff the queue (messages
// queued plus messages in flight to it) is at its limit. The count lives in
// a sealed memfd mapped by the receiver and by each process holding a send
// right. A sender that finds no slot registers a private eventfd with the
// receiver (a `wait` packet) and sleeps on it and on its connection's
// hang-up; the receiver signals registered waiters when it frees a slot.
//
// The counter is a hint, not the truth (P12): every sender maps it writable,
// so any of them can write anything there, and it can show slots taken that
// no message holds (a sender killed between its slot and its packet, a grant
// never used). The receiver keeps the truth privately (its queue and its
// limit), admits its own process's sends by it (PortCore+Admission.swift's
// `enqueueLocally`), and repairs the counter from it:
// down whenever a counted message arrives at a full queue, up when senders
// have waited while the receiver had room (then it also grants each waiter
// a slot through its eventfd, which no other sender can write). A message
// that arrives at a full queue, because its sender believed room another
// process wrote here, is parked and its connection paused, never refused
// (Admission/ParkedMessages.swift). So a process that scribbles on the counter
// stalls only itself (Docs/CrossProcess.md, "Back-pressure").
//
// Why two counters and not one word of free slots: senders and receiver
// usually run on different CPUs, and one word written by both moved its
// cache line between them on every message (a miss on each side). Here
// senders count slots taken, the receiver counts slots given back, each on
// its own cache line; free = given back − taken. Both only grow (a lowered
// limit is counted as slots taken), so a sender may keep a stale copy of
// "given back": it is never more than the truth, so it only ever
// understates the room, and a sender reads the receiver's line only when
// its copy says the queue is full.
import Glibc  // constants only: EINVAL
import HarborSystem

@usableFromInline
package final class SharedSlots: @unchecked Sendable {
    // @unchecked: the mapping and the private words are only touched through
    // AtomicWords (C11 atomics); `memory`, `local` and `descriptor` are
    // immutable.
    package static let size = 4096
    /// "HBS2": the two-counter layout. Written by the receiver when it makes
    /// or repairs the counter; checked by nobody, since any sender can
    /// overwrite it (a process adopting a counter whose magic was scribbled
    /// over must still be able to send: the receiver repairs it).
    private static let magic: Int32 = 0x4842_5332

    /// What a receiver writes to a waiter's eventfd: `wake` means "look at
    /// the counter again", `grant` means "a slot is yours, send without
    /// taking one" (the receiver counted it as taken). Both fit one eventfd
    /// value, so a sender reads both with one `read`.
    package static let wake: UInt64 = 1
    package static let grant: UInt64 = 1 << 32

    /// Int32 word indices, one 64-byte cache line apart where it matters.
    @usableFromInline enum Word {
        @usableFromInline static let magic = 0
        /// Slots taken: senders' line (and the receiver's, for a lowered limit).
        @usableFromInline static let taken = 16
        /// The last "given back" a sender read (a hint, never above the truth).
        @usableFromInline static let givenBackSeen = 17
        /// Slots given back, plus the initial limit: the receiver's line.
        @usableFromInline static let givenBack = 32
        /// Senders asleep waiting for a slot: written only on that slow path.
        @usableFromInline static let waiters = 48
    }

    /// Words of this process only (never shared).
    @usableFromInline enum Local {
        /// Waiters registered with this receiver (PortTransport's table).
        @usableFromInline static let registered = 0
        /// Messages the receiver parked off a full queue, their connections
        /// paused (Admission/ParkedMessages.swift).
        @usableFromInline static let parked = 1
        static let count = 16
    }

    package let descriptor: SharedDescriptor
    private let memory: UnsafeMutableRawPointer
    /// The counter's file, for one adopted with its key (what `fstat`
    /// said, or the trusted name server's word): its mapping goes to
    /// ``SpareSlotMappings`` rather than being unmapped.
    package let file: FileKey?
    private let local: UnsafeMutablePointer<Int32>
    private var words: UnsafeMutablePointer<Int32> { memory.assumingMemoryBound(to: Int32.self) }
    /// The shared words, for the slow paths outside `Counter`.
    private var shared: AtomicWords { AtomicWords(words) }
    /// This process's private words.
    private var own: AtomicWords { AtomicWords(local) }

    /// A fresh counter with `free` slots, owned by a receiver.
    package init(free: Int) throws(SystemError) {
        descriptor = try MemoryFile.create(name: "harbor-slots")
        try MemoryFile.setSize(descriptor.rawValue, Self.size)
        // Nobody may shrink it under a mapping (SIGBUS) or grow it.
        try MemoryFile.addSeals(descriptor.rawValue, MemoryFile.fixedSizeSeals)
        memory = try MemoryFile.map(descriptor.rawValue, size: Self.size, writable: true)
        local = Self.makeLocal()
        file = nil
        words[Word.magic] = Self.magic
        words[Word.taken] = 0
        words[Word.givenBackSeen] = Int32(free)
        words[Word.givenBack] = Int32(free)
        words[Word.waiters] = 0
    }

    /// Maps a counter that arrived from another process, after checking it
    /// is a memfd sealed against shrinking, of the right size. Its contents
    /// are not checked: any sender may have written anything there.
    ///
    /// With `file` (its key, which the caller read with `fstat`), a spare
    /// mapping of the same file (``SpareSlotMappings``) is taken instead of
    /// checking and mapping it again, and the mapping is kept there when
    /// this counter goes.
    package init(adopting descriptor: SharedDescriptor, file: FileKey? = nil) throws(SystemError) {
        if let file, let spare = SpareSlotMappings.shared.take(file) {
            memory = spare
        } else {
            let seals = try MemoryFile.seals(descriptor.rawValue)
            guard seals & MemoryFile.shrinkSeal != 0, try MemoryFile.size(descriptor.rawValue) == Self.size else {
                throw SystemError(errno: EINVAL, call: "adopt slots")
            }
            memory = try MemoryFile.map(descriptor.rawValue, size: Self.size, writable: true)
        }
        self.descriptor = descriptor
        self.file = file
        local = Self.makeLocal()
    }

    private static func makeLocal() -> UnsafeMutablePointer<Int32> {
        let local = HeapBlock.allocate(byteCount: Local.count * MemoryLayout<Int32>.stride,
                                       alignment: MemoryLayout<Int32>.alignment)
            .bindMemory(to: Int32.self, capacity: Local.count)
        local.initialize(repeating: 0, count: Local.count)
        return local
    }

    deinit {
        if let file {
            SpareSlotMappings.shared.keep(memory, of: file)
        } else {
            MemoryFile.unmap(memory, size: Self.size)
        }
        HeapBlock.deallocate(local)
    }

    /// Takes one slot if any is free.
    package func tryAcquire() -> Bool { counter.tryAcquire() }

    /// Gives `count` slots back (negative takes them, for a lowered limit).
    package func release(_ count: Int32 = 1) { counter.release(count) }

    /// The counters alone, for a holder that keeps this object alive
    /// anyway (a route, a transport): using them costs no reference count,
    /// where calling through a stored reference could cost a retain and a
    /// release per message.
    package var counter: Counter { Counter(words: AtomicWords(words), local: AtomicWords(local)) }

    /// A view of the counters; valid while its `SharedSlots` lives.
    @usableFromInline
    package struct Counter: @unchecked Sendable {
        // @unchecked: views of the shared mapping and of this process's
        // private words, touched only through atomics.
        @usableFromInline let words: AtomicWords
        @usableFromInline let local: AtomicWords

        /// Takes one slot if any is free. Touches only the senders' line
        /// while the last "given back" it read still shows room.
        @inlinable
        package func tryAcquire() -> Bool {
            var taken = words.load(Word.taken)
            var givenBack = words.load(Word.givenBackSeen)
            while true {
                if givenBack &- taken <= 0 {
                    // Full by the copy: look at the receiver's count itself.
                    let current = words.load(Word.givenBack)
                    if current != givenBack {
                        givenBack = current
                        words.storeRelaxed(Word.givenBackSeen, current)
                    }
                    if givenBack &- taken <= 0 { return false }
                }
                if words.compareExchange(Word.taken, expected: &taken, desired: taken &+ 1) { return true }
            }
        }

        /// Gives `count` slots back; a negative count takes slots (a lowered
        /// limit), counted as taken so that "given back" never shrinks.
        @inlinable
        package func release(_ count: Int32 = 1) {
            if count >= 0 {
                words.fetchAdd(Word.givenBack, count)
            } else {
                words.fetchAdd(Word.taken, 0 &- count)
            }
        }

        /// Free slots by the shared counter (negative after a limit was
        /// lowered below the queue; anything at all after a scribble).
        @inlinable
        package var free: Int32 {
            let taken = words.load(Word.taken)
            return words.load(Word.givenBack) &- taken
        }

        /// Whether the receiver has work when it frees a slot: messages it
        /// parked (its own count), senders registered with it (its own
        /// count), or senders saying they are about to register (the shared
        /// hint, which a scribbler can only make cost this receiver a look
        /// at its sockets). Read on every counted message handed out: two
        /// loads of this process's own cache line, usually.
        @inlinable
        package var waiters: Int32 {
            let own = local.load(Local.registered)
                &+ local.load(Local.parked)
            return own > 0 ? own : max(0, words.load(Word.waiters))
        }

        /// Senders waiting for a slot, without the parked messages: whether
        /// a freed slot should look for wait packets and wake waiters.
        @inlinable
        package var sendersWaiting: Int32 {
            let registered = local.load(Local.registered)
            return registered > 0 ? registered : max(0, words.load(Word.waiters))
        }

        /// Messages the receiver holds parked off its full queue (its own count).
        @inlinable
        package var parked: Int32 { local.load(Local.parked) }

        /// Makes the shared counter show `target` free slots, and rewrites
        /// the words only the receiver should write (magic, senders' hint).
        /// Moves "given back" up or "taken" up, never down, so a sender's
        /// stale copy of "given back" still never overstates the room.
        package func repair(free target: Int32) {
            let delta = target &- free
            if delta > 0 {
                words.fetchAdd(Word.givenBack, delta)
            } else if delta < 0 {
                words.fetchAdd(Word.taken, 0 &- delta)
            }
            words.storeRelaxed(Word.givenBackSeen, words.load(Word.givenBack))
            if words.load(Word.magic) != SharedSlots.magic {
                words.storeRelaxed(Word.magic, SharedSlots.magic)
            }
        }

        /// Lowers the shared count to at most `bound` free slots (the
        /// receiver's truth: no more room than limit − queued). Never raises
        /// it: slots taken for messages still in flight are not the
        /// receiver's to see. Returns whether it had to.
        @discardableResult
        package func clamp(atMost bound: Int32) -> Bool {
            guard free > bound else { return false }
            repair(free: bound)
            return true
        }
    }

    package var free: Int32 { counter.free }

    /// Senders announce themselves before sleeping, so the receiver knows to
    /// look for their wait packets when it frees a slot.
    package func addWaiter(_ delta: Int32) {
        shared.fetchAdd(Word.waiters, delta)
        // Only the slow path gets here; observers (tests) may sleep on the word.
        shared.wakeAll(Word.waiters)
    }

    /// Senders announced in the shared hint (what `waitForWaiter` watches).
    package var waiters: Int32 { max(0, shared.load(Word.waiters)) }

    /// Records how many waiters the receiver holds registered (its own
    /// count, which `Counter.waiters` reads on every freed slot).
    package func setRegisteredWaiters(_ count: Int) {
        own.storeRelaxed(Local.registered, Int32(clamping: count))
    }

    /// Records how many messages the receiver holds parked (Admission/ParkedMessages.swift).
    package func setParked(_ count: Int) {
        own.storeRelaxed(Local.parked, Int32(clamping: count))
    }

    /// Sleeps until at least one sender waits for a slot, or `timeout` passes;
    /// returns whether one does. For tests that must act while a sender blocks.
    package func waitForWaiter(timeout: Duration) -> Bool {
        let deadline = WaitDeadline(timeout: timeout)
        while true {
            let current = shared.load(Word.waiters)
            if current > 0 { return true }
            guard let spec = deadline.remaining(), !deadline.hasPassed else { return false }
            shared.wait(Word.waiters, whileEquals: current, timeout: spec)
        }
    }
}
