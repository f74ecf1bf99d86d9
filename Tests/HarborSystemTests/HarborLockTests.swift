// Harbor — HarborLock: exclusion between threads, and the value dropped with the lock.
import HarborTestSupport
import HarborSystem
import Testing

@Suite(.deadline) struct HarborLockTests {
    /// Two threads each add to a pair that must stay equal; with the lock
    /// excluding the other thread no increment is lost and no thread sees the
    /// pair half-updated. Under ThreadSanitizer (Scripts/sanitizers.sh) an
    /// unguarded access here is reported, so this also proves it sees the lock.
    @Test func lock_excludesOtherThreads() {
        let shared = SharedPair()
        let rounds = 100_000
        let threads = (0..<2).map { _ in
            TestThread { () -> Int in
                var torn = 0
                for _ in 0..<rounds {
                    shared.pair.withLock { pair in
                        if pair.first != pair.second { torn += 1 }
                        pair.first += 1
                        pair.second += 1
                    }
                }
                return torn
            }
        }
        let torn = threads.map { $0.join() }.reduce(0, +)
        #expect(torn == 0)
        #expect(shared.pair.withLock { $0.first } == 2 * rounds)
        #expect(shared.pair.withLock { $0.second } == 2 * rounds)
    }

    /// The value lives in the lock's allocation: it is released when the lock goes.
    @Test func lock_releasesItsValueWhenItGoes() {
        weak var watched: Tracked?
        do {
            let tracked = Tracked()
            watched = tracked
            let lock = HarborLock(Optional(tracked))
            #expect(lock.withLock { $0 != nil })
        }
        #expect(watched == nil)
    }

    /// A non-copyable value moves in and out through `withLock`.
    @Test func lock_movesANonCopyableValueInAndOut() throws {
        let lock = HarborLock<EventDescriptor?>(try EventDescriptor())
        let expected = lock.withLock { $0?.rawValue ?? -1 }
        let taken = lock.withLock { $0.take() }
        let left = lock.withLock { $0 == nil }
        #expect(taken?.rawValue ?? -2 == expected)
        #expect(left)
    }
}

private struct Pair { var first = 0, second = 0 }

private final class SharedPair: Sendable {
    let pair = HarborLock(Pair())
}

private final class Tracked: Sendable {}
