// Harbor — the pure parts: the timer heaps and the waitset's slot table.
@testable import HarborRunLoop
import Testing

extension RunLoopTests {
    @Suite struct PureTests {
        /// Drains `timers` at `now` the way `doTimers` does for one-shot timers.
        private func popAll(_ timers: ModeTimers, now: Int64 = .max) -> [LoopTimer] {
            var order: [LoopTimer] = []
            while let next = timers.firstDue(at: now) { order.append(next); timers.park(next) }
            return order
        }

        @Test func modeTimers_ordersByFireDateThenInsertion_andRemovesAnyTimer() {
            let timers = ModeTimers(mode: .default)
            let made = (0..<5).map { _ in LoopTimer(after: .zero) { _ in } }
            for (timer, fire) in zip(made, [50, 10, 30, 10, 70]) { timers.add(timer, fire: Int64(fire), tolerance: 0) }
            #expect(timers.firstDue(at: .max) === made[1])
            timers.remove(made[1])
            #expect(timers.firstDue(at: .max) === made[3])
            timers.schedule(made[4], fire: 1, tolerance: 0)
            #expect(timers.firstDue(at: .max) === made[4])
            timers.schedule(made[4], fire: 100, tolerance: 0)
            #expect(timers.firstDue(at: 49) === made[3])
            #expect(popAll(timers).map { ObjectIdentifier($0) } == [3, 2, 0, 4].map { ObjectIdentifier(made[$0]) })
            #expect(timers.isEmpty)
            for timer in made where timer !== made[1] { timers.remove(timer) }
            #expect(made.allSatisfy { $0.placements.isEmpty })
        }

        @Test func modeTimers_hardDeadlineIsFireDatePlusToleranceAcrossBothKinds() {
            let timers = ModeTimers(mode: .default)
            let lenient = LoopTimer(after: .zero) { _ in }
            let strict = LoopTimer(after: .zero) { _ in }
            timers.add(lenient, fire: 20, tolerance: 100)
            timers.add(strict, fire: 60, tolerance: 0)
            #expect(timers.earliestFireDate == 20)
            #expect(timers.earliestHardDeadline == 60)  // coalesced: the strict timer's date
            timers.schedule(lenient, fire: 20, tolerance: 10)  // moves within the lenient heaps
            #expect(timers.earliestHardDeadline == 30)
            timers.schedule(lenient, fire: 20, tolerance: 0)   // lenient → strict
            #expect(timers.earliestHardDeadline == 20)
            timers.schedule(strict, fire: 5, tolerance: 1)     // strict → lenient
            #expect(timers.earliestHardDeadline == 6)
            #expect(timers.fireDate(of: strict) == 5)
            timers.remove(strict)
            #expect(timers.earliestHardDeadline == 20)
            timers.remove(lenient)
            #expect(timers.earliestHardDeadline == nil)
        }

        /// The timerfd goes off at the latest fire date not after the
        /// earliest hard deadline: a lone timer at its own date, a tolerant
        /// timer later only to share the wake-up of a timer due after it.
        @Test func RL07_modeTimers_wakeAtTheLatestFireDateTheEarliestHardDeadlineAllows() {
            let timers = ModeTimers(mode: .default)
            let first = LoopTimer(after: .zero) { _ in }
            let second = LoopTimer(after: .zero) { _ in }
            let third = LoopTimer(after: .zero) { _ in }
            #expect(timers.wakeDeadline == nil)
            timers.add(first, fire: 20, tolerance: 5)
            #expect(timers.wakeDeadline == 20)  // alone: on time, not at 25
            timers.add(second, fire: 23, tolerance: 100)
            #expect(timers.wakeDeadline == 23)  // the first waits 3 for the second
            timers.add(third, fire: 26, tolerance: 0)
            #expect(timers.wakeDeadline == 23)  // beyond the first's 25: not waited for
            timers.remove(first)
            #expect(timers.wakeDeadline == 26)  // the second waits for the strict third
            timers.remove(third)
            #expect(timers.wakeDeadline == 23)
            timers.remove(second)
            #expect(timers.wakeDeadline == nil)
            // Against a model, with many tolerant timers and tombstones.
            var generator = SplitMix(seed: 5)
            let made = (0..<200).map { _ in LoopTimer(after: .zero) { _ in } }
            var model: [ObjectIdentifier: (fire: Int64, hard: Int64)] = [:]
            for _ in 0..<2000 {
                let timer = made[Int(generator.next() % 200)]
                let fire = Int64(generator.next() % 1000), tolerance = Int64(generator.next() % 4) * 30
                if generator.next() % 3 == 0 {
                    timers.remove(timer); model[ObjectIdentifier(timer)] = nil
                } else {
                    timers.add(timer, fire: fire, tolerance: tolerance)
                    model[ObjectIdentifier(timer)] = (fire, fire + tolerance)
                }
                let hard = model.values.map(\.hard).min()
                let window = hard.map { hard in model.values.filter { $0.fire <= hard }.count } ?? 0
                let expected = hard.map { hard in model.values.map(\.fire).filter { $0 <= hard }.max()! }
                if window <= ModeTimers.coalescingWalk {
                    #expect(timers.wakeDeadline == expected)
                } else {
                    // Too many to walk: some due timer's date, none past its hard deadline.
                    #expect(timers.wakeDeadline.map { date in model.values.contains { $0.fire == date } } == true)
                    #expect(timers.wakeDeadline.map { $0 <= hard! } == true)
                }
            }
            for timer in made { timers.remove(timer) }
            // More timers due by the hard deadline than the walk takes.
            for (index, timer) in made.enumerated() { timers.add(timer, fire: Int64(index), tolerance: 1000) }
            let date = timers.wakeDeadline ?? -1
            #expect(date >= Int64(ModeTimers.coalescingWalk) - 1 && date < Int64(made.count), "\(date)")
            for timer in made { timers.remove(timer) }
        }

        @Test func modeTimers_randomOperationsMatchASortedModel_inTwoModes() {
            // Two modes share the timers, so each timer has two placements.
            let first = ModeTimers(mode: .default), second = ModeTimers(mode: "tracking")
            var generator = SplitMix(seed: 7)
            let made = (0..<300).map { _ in LoopTimer(after: .zero) { _ in } }
            var model: [ObjectIdentifier: (fire: Int64, hard: Int64)] = [:]
            for _ in 0..<3000 {
                let timer = made[Int(generator.next() % 300)]
                let fire = Int64(generator.next() % 1000), tolerance = Int64(generator.next() % 3) * 50
                if generator.next() % 4 == 0 {
                    first.remove(timer); second.remove(timer); model[ObjectIdentifier(timer)] = nil
                } else {
                    first.add(timer, fire: fire, tolerance: tolerance); second.add(timer, fire: fire, tolerance: tolerance)
                    model[ObjectIdentifier(timer)] = (fire, fire + tolerance)
                }
                for timers in [first, second] {
                    #expect(timers.count == model.count)
                    #expect(timers.earliestFireDate == model.values.map(\.fire).min())
                    #expect(timers.earliestHardDeadline == model.values.map(\.hard).min())
                }
            }
            let fires = popAll(first).map { model[ObjectIdentifier($0)]!.fire }
            #expect(fires == fires.sorted())
            for timer in made { first.remove(timer); second.remove(timer) }
            #expect(second.isEmpty && made.allSatisfy { $0.placements.isEmpty })
        }

        /// Timers join and leave three modes one at a time, so a timer's
        /// first placement is often left while it stays in the others (the
        /// next one is promoted and its heap entries marked), and removals
        /// leave tombstones that the heaps drop at the top or all at once.
        /// After every step each member's position must still find its own
        /// entry: `fireDate(of:)` reads the key at the position the timer
        /// holds, so a position a sift or a compaction failed to write reads
        /// another timer's date.
        @Test func RL07_modeTimers_positionsSurviveTombstonesAndFirstPlacementPromotions() {
            let modes = [ModeTimers(mode: .default), ModeTimers(mode: "tracking"), ModeTimers(mode: "modal")]
            var generator = SplitMix(seed: 11)
            let made = (0..<400).map { _ in LoopTimer(after: .zero) { _ in } }
            let byID = Dictionary(uniqueKeysWithValues: made.map { (ObjectIdentifier($0), $0) })
            // model[mode][timer] = (fire, fire + tolerance)
            var model = Array(repeating: [ObjectIdentifier: (fire: Int64, hard: Int64)](), count: modes.count)
            for step in 0..<6_000 {
                let which = Int(generator.next() % 400), mode = Int(generator.next() % 3)
                let timer = made[which], id = ObjectIdentifier(timer)
                let fire = Int64(generator.next() % 5000), tolerance = Int64(generator.next() % 3) * 40
                // Mostly removals once a mode is full, so tombstones pile up.
                if generator.next() % 2 == 0 {
                    #expect(modes[mode].remove(timer) == (model[mode][id] != nil))
                    model[mode][id] = nil
                } else {
                    modes[mode].add(timer, fire: fire, tolerance: tolerance)
                    model[mode][id] = (fire, fire + tolerance)
                }
                if step % 10 == 0 {
                    for index in modes.indices {
                        #expect(modes[index].count == model[index].count)
                        #expect(modes[index].earliestFireDate == model[index].values.map(\.fire).min())
                        #expect(modes[index].earliestHardDeadline == model[index].values.map(\.hard).min())
                        for (member, dates) in model[index] {
                            #expect(modes[index].fireDate(of: byID[member]!) == dates.fire)
                        }
                    }
                }
            }
            // The run did reach compactions, not only drops at the top.
            #expect(modes.allSatisfy { $0.compactions > 0 })
            for index in modes.indices {
                let fires = popAll(modes[index]).map { model[index][ObjectIdentifier($0)]!.fire }
                #expect(fires.count == model[index].count)
                #expect(fires == fires.sorted())
            }
            for timer in made { for timers in modes { timers.remove(timer) } }
            #expect(made.allSatisfy { $0.placements.isEmpty })
        }

        /// A removed timer's entry may stay behind as a tombstone, but the
        /// tombstone holds no retain: the timer goes as soon as nothing else
        /// holds it, as CF releases an invalidated timer from its modes.
        @Test func RL07_modeTimers_aRemovedTimerIsReleasedAtOnce_notWhenItsTombstoneGoes() {
            let timers = ModeTimers(mode: .default)
            let others = (0..<100).map { _ in LoopTimer(after: .zero) { _ in } }
            for (index, timer) in others.enumerated() { timers.add(timer, fire: Int64(index), tolerance: 5) }
            weak var gone: LoopTimer?
            do {
                let timer = LoopTimer(after: .zero) { _ in }
                timers.add(timer, fire: -1, tolerance: 10)  // sifts to the top of both lenient heaps
                gone = timer
                timers.remove(timer)
            }
            #expect(gone == nil)
            #expect(timers.tombstones > 0)
            #expect(timers.count == 100)
            for timer in others { timers.remove(timer) }
            #expect(timers.isEmpty)
        }

        @Test func slotTable_staleGenerationIsDropped() {
            final class Item {}
            var table = SlotTable<Item>()
            let first = Item()
            let token = table.insert(first, kind: .source)
            #expect(table.lookup(token) === first)
            table.remove(token)
            let second = Item()
            let reused = table.insert(second, kind: .source)
            #expect(reused.slot == token.slot)
            #expect(table.lookup(token) == nil)  // an event for the old item is stale
            #expect(table.lookup(reused) === second)
            #expect(WaitToken(rawValue: reused.rawValue) == reused)
        }
    }
}

/// A tiny seeded generator for repeatable random tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
