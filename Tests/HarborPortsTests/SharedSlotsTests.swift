// Harbor — P07: the shared slot counter that makes the queue limit hold
// across processes. Two mappings of one memfd stand for two processes.
// P12: the counter is a hint every sender can write; the receiver repairs it.
import Glibc
import HarborTestSupport
import Synchronization
import Testing
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

@Suite(.deadline) struct SharedSlotsTests {
    @Test func P07_slotsAreTakenUpToTheLimitAndGivenBack() throws {
        try expectNoDescriptorLeak { () throws in
            let receiver = try SharedSlots(free: 3)
            let sender = try SharedSlots(adopting: receiver.descriptor)
            #expect(sender.tryAcquire())
            #expect(sender.tryAcquire())
            #expect(sender.tryAcquire())
            #expect(!sender.tryAcquire(), "a fourth slot of three")
            #expect(receiver.free == 0)
            receiver.release()
            // The sender's remembered count said full: it must look again.
            #expect(sender.tryAcquire(), "the slot given back is seen")
            #expect(!sender.tryAcquire())
        }
    }

    @Test func P07_aLoweredLimitHoldsForASenderThatSawRoomBefore() throws {
        try expectNoDescriptorLeak { () throws in
            let receiver = try SharedSlots(free: 4)
            let sender = try SharedSlots(adopting: receiver.descriptor)
            #expect(sender.tryAcquire())  // the sender now remembers room for 3 more
            receiver.release(-3)  // the limit drops from 4 to 1, and one slot is in use
            #expect(receiver.free == 0)
            #expect(!sender.tryAcquire(), "room the sender saw before the limit dropped is gone")
            receiver.release()
            #expect(sender.tryAcquire())
            #expect(!sender.tryAcquire())
        }
    }

    @Test func P07_concurrentSendersNeverHoldMoreThanTheLimit() throws {
        try expectNoDescriptorLeak { () throws in
            let limit = 3
            let receiver = try SharedSlots(free: limit)
            let held = Atomic<Int>(0)
            let overLimit = Atomic<Int>(0)
            let acquired = Atomic<Int>(0)
            let senders = try (0..<4).map { _ in try SharedSlots(adopting: receiver.descriptor) }
            let threads = senders.map { slots in
                TestThread { () -> Bool in
                    for _ in 0..<20_000 {
                        guard slots.tryAcquire() else { continue }
                        acquired.add(1, ordering: .relaxed)
                        if held.add(1, ordering: .sequentiallyConsistent).newValue > limit {
                            overLimit.add(1, ordering: .relaxed)
                        }
                        held.subtract(1, ordering: .sequentiallyConsistent)
                        receiver.release()
                    }
                    return true
                }
            }
            for thread in threads { #expect(thread.join()) }
            #expect(overLimit.load(ordering: .relaxed) == 0, "more slots held at once than the limit")
            #expect(acquired.load(ordering: .relaxed) > 0)
            #expect(receiver.free == Int32(limit), "every slot taken was given back")
        }
    }
    /// Writes the counter's words as a hostile sender with its own mapping would.
    private func scribble(_ slots: SharedSlots, _ write: (UnsafeMutablePointer<Int32>) -> Void) throws {
        let memory = try MemoryFile.map(slots.descriptor.rawValue, size: SharedSlots.size, writable: true)
        defer { MemoryFile.unmap(memory, size: SharedSlots.size) }
        write(memory.assumingMemoryBound(to: Int32.self))
    }

    @Test func P12_aCounterWrittenFullIsRepairedFromTheReceiversCount() throws {
        try expectNoDescriptorLeak { () throws in
            let receiver = try SharedSlots(free: 3)
            let sender = try SharedSlots(adopting: receiver.descriptor)
            try scribble(receiver) { words in
                words[16] = Int32.max / 2  // slots taken
                words[17] = 0              // the senders' copy of "given back"
            }
            #expect(!sender.tryAcquire(), "written full, the counter stops honest senders")
            receiver.counter.repair(free: 3)
            #expect(receiver.free == 3)
            #expect(sender.tryAcquire())
            #expect(sender.tryAcquire())
            #expect(sender.tryAcquire())
            #expect(!sender.tryAcquire(), "repaired to the receiver's count, not beyond")
        }
    }

    @Test func P12_clampingLowersTheCountAndNeverRaisesIt() throws {
        try expectNoDescriptorLeak { () throws in
            let receiver = try SharedSlots(free: 2)
            let sender = try SharedSlots(adopting: receiver.descriptor)
            #expect(!receiver.counter.clamp(atMost: 5), "room the receiver does not see is not made")
            #expect(receiver.free == 2)
            try scribble(receiver) { words in words[32] = 1000 }  // "given back" written up: room that is not there
            #expect(receiver.counter.clamp(atMost: 2))
            #expect(receiver.free == 2)
            #expect(sender.tryAcquire())
            #expect(sender.tryAcquire())
            #expect(!sender.tryAcquire())
            #expect(receiver.counter.clamp(atMost: -3), "a queue past its limit shows less than no room")
            #expect(receiver.free == -3)
        }
    }

    @Test func P12_aCounterWhosePageWasOverwrittenIsStillAdoptedAndRepaired() throws {
        try expectNoDescriptorLeak { () throws in
            let receiver = try SharedSlots(free: 2)
            try scribble(receiver) { words in words.withMemoryRebound(to: UInt8.self, capacity: SharedSlots.size) {
                $0.initialize(repeating: 0xFF, count: SharedSlots.size)
            } }
            let newcomer = try SharedSlots(adopting: receiver.descriptor)
            receiver.counter.repair(free: 2)
            var magic: Int32 = 0
            try scribble(receiver) { words in magic = words[0] }
            #expect(magic == 0x4842_5332, "the receiver writes its layout's magic back")
            #expect(newcomer.tryAcquire())
            #expect(newcomer.tryAcquire())
            #expect(!newcomer.tryAcquire())
        }
    }

    @Test func P12_theReceiverLooksForWaitersByItsOwnCount() throws {
        try expectNoDescriptorLeak { () throws in
            let receiver = try SharedSlots(free: 1)
            try scribble(receiver) { words in words[48] = -50 }  // the senders' announcement, written down
            receiver.setRegisteredWaiters(2)
            #expect(receiver.counter.waiters == 2, "registered waiters are woken whatever the shared word says")
            receiver.setRegisteredWaiters(0)
            #expect(receiver.counter.waiters == 0)
            try scribble(receiver) { words in words[48] = 7 }
            #expect(receiver.counter.waiters == 7, "announced ones make the receiver look at its sockets")
        }
    }

    /// P07: a sender's counter adopted with its file's key stays mapped when
    /// the right goes (``SpareSlotMappings``): the next right to the same
    /// port adopts it without mapping it again, shares the receiver's
    /// words, and keeps no descriptor; another file's counter does not take
    /// it, and at most ``SpareSlotMappings/capacity`` are kept.
    @Test func P07_aDroppedRightsCounterStaysMappedForTheNextRightToItsPort() throws {
        try expectNoDescriptorLeak { () throws in
            let spare = SpareSlotMappings.shared
            let receiver = try SharedSlots(free: 2)
            let file = try FileKey(of: receiver.descriptor.rawValue)
            let before = spare.count
            do {
                let first = try SharedSlots(adopting: SharedDescriptor(taking: dup(receiver.descriptor.rawValue)), file: file)
                #expect(first.tryAcquire())
            }
            #expect(spare.count == min(before + 1, SpareSlotMappings.capacity), "the mapping is kept when the right goes")
            let again = try SharedSlots(adopting: SharedDescriptor(taking: dup(receiver.descriptor.rawValue)), file: file)
            #expect(spare.count == min(before + 1, SpareSlotMappings.capacity) - 1, "the next right takes it")
            #expect(again.tryAcquire(), "the second of two slots")
            #expect(!again.tryAcquire(), "it reads the same counter: the first right's slot is still taken")
            receiver.release(2)
            #expect(again.tryAcquire())
            // Counters of other ports fill it up to its capacity, no more.
            let others = try (0...SpareSlotMappings.capacity).map { _ in try SharedSlots(free: 1) }
            for other in others {
                let key = try FileKey(of: other.descriptor.rawValue)
                _ = try SharedSlots(adopting: SharedDescriptor(taking: dup(other.descriptor.rawValue)), file: key)
            }
            #expect(spare.count == SpareSlotMappings.capacity)
        }
    }
}
