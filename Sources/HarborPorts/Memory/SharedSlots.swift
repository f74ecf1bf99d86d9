// Harbor — a port's queue slots, shared by the receiver and every sending process.
//
// Back-pressure across processes must hold exactly: a sender blocks iff the
// queue (messages queued plus messages in flight to it) is at its limit. One
// counter of free slots, in a sealed memfd mapped by the receiver and by each
// process holding a send right, gives that with one atomic instruction per
// send and none per receive beyond the release. A sender that finds no slot
// registers a private eventfd with the receiver (a `wait` packet) and sleeps
// on it and on its connection's hang-up; the receiver signals registered
// waiters when it frees a slot. A hostile process can only corrupt the counter
// of a port it may send to anyway; the receiver caps what it accepts.
import CHarborLinux
import Glibc

package final class SharedSlots: @unchecked Sendable {
    // @unchecked: the mapping is only touched through the C11 atomics in
    // CHarborLinux; `memory` and `descriptor` are immutable.
    package static let size = 4096
    private static let magic: Int32 = 0x4842_534c  // "HBSL"

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
        words[0] = Self.magic
        words[1] = Int32(free)
        words[2] = 0
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

    /// The free-slot word alone, for a holder that keeps this object alive
    /// anyway (a route, a transport): using it costs no reference count,
    /// where calling through a stored reference could cost a retain and a
    /// release per message.
    package var counter: Counter { Counter(word: words + 1) }

    /// A view of the free-slot word; valid while its `SharedSlots` lives.
    package struct Counter: @unchecked Sendable {
        // @unchecked: a pointer into the shared mapping, touched only
        // through C11 atomics.
        fileprivate let word: UnsafeMutablePointer<Int32>

        /// Takes one slot if any is free.
        package func tryAcquire() -> Bool {
            var current = charbor_atomic_load_i32(word)
            while current > 0 {
                if charbor_atomic_compare_exchange_i32(word, &current, current - 1) { return true }
            }
            return false
        }

        /// Gives `count` slots back (negative takes them, for a lowered limit).
        package func release(_ count: Int32 = 1) { _ = charbor_atomic_fetch_add_i32(word, count) }

        /// Free slots now.
        package var free: Int32 { charbor_atomic_load_i32(word) }

        /// Senders in other processes waiting for a slot (the next word).
        package var waiters: Int32 { charbor_atomic_load_i32(word + 1) }
    }

    package var free: Int32 { counter.free }

    /// Senders announce themselves before sleeping, so the receiver knows to
    /// look for their wait packets when it frees a slot.
    package func addWaiter(_ delta: Int32) {
        _ = charbor_atomic_fetch_add_i32(words + 2, delta)
        // Only the slow path gets here; observers (tests) may sleep on the word.
        _ = charbor_futex_wake(words + 2, Int32.max)
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
            _ = charbor_futex_wait(words + 2, current, &spec)
        }
    }
}
