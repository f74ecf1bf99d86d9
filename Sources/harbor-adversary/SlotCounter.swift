// harbor-adversary — the shared slot counter as a sending process maps it.
//
// Every send right carries the port's slot counter (a memfd). An honest
// sender takes a slot with a compare-and-swap before each counted message;
// the adversary does the same (so its refused messages cost the receiver a
// slot, as a real sender's would), and it can also write anything there.
// Layout "HBS2" (Sources/HarborPorts/Memory/SharedSlots.swift): Int32 words,
// magic at 0, slots taken at 16, the last "given back" seen at 17, given
// back at 32, waiters at 48. When the layout is something else (the counter
// was redesigned), the adversary sends without taking slots.
import CHarborLinux
import Glibc

final class SlotCounter {
    static let size = 4096
    static let magic: Int32 = 0x4842_5332

    private let memory: UnsafeMutableRawPointer?
    /// Whether the mapping is writable (the receiver could refuse that).
    let isWritable: Bool

    init(_ fd: CInt) {
        var mapped = mmap(nil, Self.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
        var writable = true
        if mapped == MAP_FAILED {
            writable = false
            mapped = mmap(nil, Self.size, PROT_READ, MAP_SHARED, fd, 0)
        }
        memory = mapped == MAP_FAILED ? nil : mapped
        isWritable = writable && memory != nil
    }

    deinit {
        if let memory { munmap(memory, Self.size) }
        if waiter >= 0 { close(waiter) }
    }

    /// The eventfd this sender registers with the receiver when it waits.
    private var waiter: CInt = -1

    private var words: UnsafeMutablePointer<Int32>? { memory?.assumingMemoryBound(to: Int32.self) }

    /// Whether the memfd holds the counter layout this adversary knows.
    var isKnownLayout: Bool {
        guard let words else { return false }
        return charbor_atomic_load_i32(words) == Self.magic
    }

    /// Free slots by the counter (nil when the layout is unknown).
    var free: Int32? {
        guard let words, isKnownLayout else { return nil }
        return charbor_atomic_load_i32(words + 32) &- charbor_atomic_load_i32(words + 16)
    }

    /// Takes a slot as an honest sender would; true when one was taken or
    /// the layout is unknown (nothing to take).
    func tryAcquire() -> Bool {
        guard let words, isKnownLayout, isWritable else { return true }
        var taken = charbor_atomic_load_i32(words + 16)
        while true {
            let givenBack = charbor_atomic_load_i32(words + 32)
            if givenBack &- taken <= 0 { return false }
            if charbor_atomic_compare_exchange_i32(words + 16, &taken, taken &+ 1) { return true }
        }
    }

    /// Takes a slot, waiting up to `patience` as an honest sender waits
    /// (RemoteRoute's `waitForSlot`): it announces itself in the waiters
    /// word, registers its eventfd with the receiver in a wait packet on
    /// `socket` (again on a timer, 1 ms doubling to 64 ms), and sleeps on the
    /// eventfd; a value of 2^32 or more there is a slot granted to it alone.
    /// False at the deadline or once the connection has hung up.
    func acquire(patience: Duration, socket: CInt) -> Bool {
        if tryAcquire() { return true }
        guard let words else { return false }
        if waiter < 0 { waiter = RawIO.eventDescriptor() }
        _ = charbor_atomic_fetch_add_i32(words + 48, 1)
        defer { _ = charbor_atomic_fetch_add_i32(words + 48, -1) }
        let deadline = ContinuousClock.now + patience
        var interval = 1
        while ContinuousClock.now < deadline {
            _ = RawIO.send(socket, [Packet.wait.encoded], descriptors: [waiter])
            var probes = [pollfd(fd: waiter, events: Int16(POLLIN), revents: 0),
                          pollfd(fd: socket, events: 0, revents: 0)]
            _ = poll(&probes, 2, CInt(interval))
            if probes[1].revents & Int16(POLLHUP) != 0 { return false }
            var value: UInt64 = 0
            if probes[0].revents & Int16(POLLIN) != 0, read(waiter, &value, 8) == 8, value >= 1 << 32 { return true }
            if tryAcquire() { return true }
            interval = min(interval * 2, 64)
        }
        return false
    }

    /// Makes the counter read "full" for every sender: slots taken far past
    /// slots given back, the senders' hint at zero. False if not writable.
    func scribbleFull() -> Bool {
        guard let words, isWritable else { return false }
        charbor_atomic_store_relaxed_i32(words + 16, Int32.max / 2)
        charbor_atomic_store_relaxed_i32(words + 17, 0)
        return true
    }

    /// Makes the counter read "room" for every sender (slots given back far
    /// past slots taken, the senders' hint too) and announces a waiting
    /// sender (so the receiver reads its sockets whenever it frees a slot,
    /// queue full or not). False if not writable.
    func scribbleRoom() -> Bool {
        guard let words, isWritable else { return false }
        charbor_atomic_store_relaxed_i32(words + 16, 0)
        charbor_atomic_store_relaxed_i32(words + 17, Int32.max / 2)
        charbor_atomic_store_relaxed_i32(words + 32, Int32.max / 2)
        charbor_atomic_store_relaxed_i32(words + 48, 1)
        return true
    }

    /// Overwrites the whole page, magic included, with 0xFF bytes: a process
    /// that adopts the counter afterwards finds no layout it knows.
    func scribbleEverything() -> Bool {
        guard let memory, isWritable else { return false }
        memset(memory, 0xFF, Self.size)
        return true
    }

    /// Gives back `count` slots this process took and never used (slots
    /// taken count down), as a sender that gave up would.
    func untake(_ count: Int) {
        guard let words, isKnownLayout, isWritable, count > 0 else { return }
        _ = charbor_atomic_fetch_add_i32(words + 16, Int32(0 - count))
    }

    /// Takes every free slot and keeps them (an honest-looking hoard).
    func takeAll() -> Int {
        var count = 0
        while count < 100_000, isKnownLayout, tryAcquire() { count += 1 }
        return count
    }
}
