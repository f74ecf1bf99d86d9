// Harbor — P07: the shared slot counter that makes the queue limit hold
// across processes. Two mappings of one memfd stand for two processes.
import HarborTestSupport
import Synchronization
import Testing
@testable import HarborPorts

@Suite struct SharedSlotsTests {
    @Test func P07_slotsAreTakenUpToTheLimitAndGivenBack() throws {
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

    @Test func P07_aLoweredLimitHoldsForASenderThatSawRoomBefore() throws {
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

    @Test func P07_concurrentSendersNeverHoldMoreThanTheLimit() throws {
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
