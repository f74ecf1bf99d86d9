// Harbor — the pure parts: the timer heap and the waitset's slot table.
@testable import HarborRunLoop
import Testing

extension RunLoopTests {
    @Suite struct PureTests {
        @Test func indexedHeap_ordersByPriorityThenInsertion_andRemovesAnyKey() {
            var heap = IndexedHeap<Int>()
            for (key, priority) in [(1, 50), (2, 10), (3, 30), (4, 10), (5, 70)] {
                heap.set(key, priority: Int64(priority))
            }
            #expect(heap.min?.key == 2)
            heap.remove(2)
            #expect(heap.min?.key == 4)
            heap.set(5, priority: 1)
            #expect(heap.min?.key == 5)
            heap.set(5, priority: 100)
            var order: [Int] = []
            while let top = heap.min { order.append(top.key); heap.remove(top.key) }
            #expect(order == [4, 3, 1, 5])
        }

        @Test func indexedHeap_entriesUpTo_returnsExactlyTheDueOnes() {
            var heap = IndexedHeap<Int>()
            for key in 0..<1000 { heap.set(key, priority: Int64((key * 7919) % 1000)) }
            let due = heap.entries(upTo: 99)
            #expect(due.count == 100)
            #expect(due.allSatisfy { $0.priority <= 99 })
        }

        @Test func slotTable_staleGenerationIsDropped() {
            final class Item {}
            var table = SlotTable<Item>()
            let first = Item()
            let token = table.insert(first, kind: .port)
            #expect(table.lookup(token) === first)
            table.remove(token)
            let second = Item()
            let reused = table.insert(second, kind: .port)
            #expect(reused.slot == token.slot)
            #expect(table.lookup(token) == nil)  // an event for the old item is stale
            #expect(table.lookup(reused) === second)
            #expect(WaitToken(rawValue: reused.rawValue) == reused)
        }
    }
}
