// Harbor — a port's queue slots, shared by the receiver and every sending process.
//
// Back-pressure across processes must hold exactly: a sender blocks iff the
// queue (messages queued plus messages in flight to it) is at its limit. The
// count lives in a sealed memfd mapped by the receiver and by each process
// holding a send right. A sender that finds no slot registers a private
// eventfd with the receiver (a `wait` packet) and sleeps on it and on its
// connection's hang-up; the receiver signals registered waiters when it
// frees a slot. A hostile process can only corrupt the counter of a port it
// may send to anyway; the receiver caps what it accepts.
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
import CHarborLinux
import Glibc

package final class SharedSlots: @unchecked Sendable {
    // @unchecked: the mapping is only touched through the C11 atomics in
    // CHarborLinux; `memory` and `descriptor` are immutable.
    package static let size = 4096
    /// "HBS2": the two-counter layout; a process with the old one-word
    /// layout ("HBSL") refuses this memfd instead of misreading it.
    private static let magic: Int32 = 0x4842_5332

    /// Int32 word indices, one 64-byte cache line apart where it matters.
    fileprivate enum Word {
        static let magic = 0
        /// Slots taken: senders' line (and the receiver's, for a lowered limit).
        static let taken = 16
        /// The last "given back" a sender read (a hint, never above the truth).
        static let givenBackSeen = 17
        /// Slots given back, plus the initial limit: the receiver's line.
        static let givenBack = 32
        /// Senders asleep waiting for a slot: written only on that slow path.
        static let waiters = 48
    }

    package let descriptor: SharedDescriptor
    private let memory: UnsafeMutableRawPointer
    private var words: UnsafeMutablePointer<Int32> { memory.assumingMemoryBound(to: Int32.self) }

    /// A fresh counter with `free` slots, owned by a receiver.
    package init(free: Int) throws(SystemError) {
        descriptor = try MemoryFile.create(name: "harbor-slots")
        try MemoryFile.setSize(descriptor.rawValue, Self.size)
        // Nobody may shrink it under a mapping (SIGBUS) or grow it.
        try MemoryFile.addSeals(descriptor.rawValue, charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
        memory = try MemoryFile.map(descriptor.rawValue, size: Self.size, writable: true)
        words[Word.magic] = Self.magic
        words[Word.taken] = 0
        words[Word.givenBackSeen] = Int32(free)
        words[Word.givenBack] = Int32(free)
        words[Word.waiters] = 0
    }

    /// Maps a counter that arrived from another process, after checking it
    /// is a memfd sealed against shrinking, of the right size and magic.
    package init(adopting descriptor: SharedDescriptor) throws(SystemError) {
        let seals = try MemoryFile.seals(descriptor.rawValue)
        guard seals & charbor_F_SEAL_SHRINK != 0, try MemoryFile.size(descriptor.rawValue) == Self.size else {
            throw SystemError(errno: EINVAL, call: "adopt slots")
        }
        self.descriptor = descriptor
        memory = try MemoryFile.map(descriptor.rawValue, size: Self.size, writable: true)
        guard charbor_atomic_load_i32(memory.assumingMemoryBound(to: Int32.self)) == Self.magic else {
            MemoryFile.unmap(memory, size: Self.size)
            throw SystemError(errno: EINVAL, call: "adopt slots")
        }
    }

    deinit { MemoryFile.unmap(memory, size: Self.size) }

    /// Takes one slot if any is free.
    package func tryAcquire() -> Bool { counter.tryAcquire() }

    /// Gives `count` slots back (negative takes them, for a lowered limit).
    package func release(_ count: Int32 = 1) { counter.release(count) }

    /// The counters alone, for a holder that keeps this object alive
    /// anyway (a route, a transport): using them costs no reference count,
    /// where calling through a stored reference could cost a retain and a
    /// release per message.
    package var counter: Counter { Counter(words: words) }

    /// A view of the counters; valid while its `SharedSlots` lives.
    package struct Counter: @unchecked Sendable {
        // @unchecked: a pointer into the shared mapping, touched only
        // through C11 atomics.
        fileprivate let words: UnsafeMutablePointer<Int32>

        /// Takes one slot if any is free. Touches only the senders' line
        /// while the last "given back" it read still shows room.
        package func tryAcquire() -> Bool {
            var taken = charbor_atomic_load_i32(words + Word.taken)
            var givenBack = charbor_atomic_load_i32(words + Word.givenBackSeen)
            while true {
                if givenBack &- taken <= 0 {
                    // Full by the copy: look at the receiver's count itself.
                    let current = charbor_atomic_load_i32(words + Word.givenBack)
                    if current != givenBack {
                        givenBack = current
                        charbor_atomic_store_relaxed_i32(words + Word.givenBackSeen, current)
                    }
                    if givenBack &- taken <= 0 { return false }
                }
                if charbor_atomic_compare_exchange_i32(words + Word.taken, &taken, taken &+ 1) { return true }
            }
        }

        /// Gives `count` slots back; a negative count takes slots (a lowered
        /// limit), counted as taken so that "given back" never shrinks.
        package func release(_ count: Int32 = 1) {
            if count >= 0 {
                _ = charbor_atomic_fetch_add_i32(words + Word.givenBack, count)
            } else {
                _ = charbor_atomic_fetch_add_i32(words + Word.taken, 0 &- count)
            }
        }

        /// Free slots now (negative after a limit was lowered below the queue).
        package var free: Int32 {
            let taken = charbor_atomic_load_i32(words + Word.taken)
            return charbor_atomic_load_i32(words + Word.givenBack) &- taken
        }

        /// Senders in other processes waiting for a slot.
        package var waiters: Int32 { charbor_atomic_load_i32(words + Word.waiters) }
    }

    package var free: Int32 { counter.free }

    /// Senders announce themselves before sleeping, so the receiver knows to
    /// look for their wait packets when it frees a slot.
    package func addWaiter(_ delta: Int32) {
        _ = charbor_atomic_fetch_add_i32(words + Word.waiters, delta)
        // Only the slow path gets here; observers (tests) may sleep on the word.
        _ = charbor_futex_wake(words + Word.waiters, Int32.max)
    }
    package var waiters: Int32 { counter.waiters }

    /// Sleeps until at least one sender waits for a slot, or `timeout` passes;
    /// returns whether one does. For tests that must act while a sender blocks.
    package func waitForWaiter(timeout: Duration) -> Bool {
        let deadline = WaitDeadline(timeout: timeout)
        while true {
            let current = waiters
            if current > 0 { return true }
            guard var spec = deadline.remaining(), !deadline.hasPassed else { return false }
            _ = charbor_futex_wait(words + Word.waiters, current, &spec)
        }
    }
}
