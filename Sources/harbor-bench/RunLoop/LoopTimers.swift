// Harbor — benchmark: timers by the ten thousand to the million, added, fired and cancelled.
import Glibc

/// N one-shot timers with distinct near-future fire dates: add them all,
/// fire them all, add N more and cancel them all; Harbor beside Foundation.
/// Two orders: `random` (the headline: fire dates added in a seeded random
/// order, cancelled in another) and `ascending` (added in fire date order and
/// cancelled in adding order: CF's best case). Each cycle runs on a fresh thread with a fresh loop; cycles of
/// the two implementations alternate. Whole phases are timed, not single
/// operations, so this benchmark reports itself instead of using the
/// per-operation harness.
struct LoopTimers: RunnableBenchmark {
    let name = "loop-timers"
    let summary = "N timers: add all, fire all, add again and cancel all (Harbor vs Foundation, a C heap, sd-event)"

    /// Timers per cycle and cycles per implementation, full and `--quick`.
    static let sizes: [(count: Int, label: String, rounds: Int, quickRounds: Int)] = [
        (10_000, "10k", 5, 1),
        (100_000, "100k", 3, 1),
        (1_000_000, "1M", 1, 0),
    ]
    /// Fire dates 1 µs apart: distinct for both (Date resolves about 0.12 µs).
    static let spacing: Int64 = 1_000
    /// A cycle that is not done after this long is abandoned and reported so.
    static let budget: Int64 = 20_000_000_000
    /// Seed of the random order (the same in every run).
    static let seed: UInt64 = 0x4861_7262_6F72  // "Harbor"

    func runAndReport(options: RunOptions, clockCost: Int64) throws {
        let cycles: [any TimerCycle] = [HarborTimerCycle(), FoundationTimerCycle(), FloorTimerCycle(), SDEventTimerCycle()]
        let onlyNames = options.only
        let selected = cycles.filter { onlyNames.isEmpty || $0.name == "harbor" || onlyNames.contains($0.name) }
        // Every (size, order) pair, as (label, count, rounds, order).
        var plan: [(size: String, count: Int, rounds: Int, order: TimerOrder)] = []
        // HARBOR_TIMERS_ONLY=1M/random (or 1M, or random): one size and/or
        // order, for profiling and repeated runs of the headline case.
        let filter = getenv("HARBOR_TIMERS_ONLY").map { String(cString: $0).split(separator: "/").map(String.init) } ?? []
        for size in Self.sizes where filter.isEmpty || !Self.sizes.contains(where: { filter.contains($0.label) }) || filter.contains(size.label) {
            let rounds = options.rounds.map { min($0, size.rounds) } ?? (options.quick ? size.quickRounds : size.rounds)
            guard rounds > 0 else { continue }
            let orders = filter.contains("random") || filter.contains("ascending") ? filter : ["random", "ascending"]
            if orders.contains("random") { plan.append((size.label, size.count, rounds, .random(count: size.count, seed: Self.seed))) }
            if orders.contains("ascending") { plan.append((size.label, size.count, rounds, .ascending)) }
        }
        var rows: [Row] = []
        for (label, count, rounds, order) in plan {
            var results = Array(repeating: [TimerCycleResult](), count: selected.count)
            progress("\(name): \(label) timers, \(order.name), \(rounds) cycle(s) per implementation")
            // Untimed, first: one Harbor cycle (the implementation that
            // allocates most) faults in the memory every cycle then reuses
            // (a new thread takes over a finished thread's malloc arena).
            // Without it the first cycle of a process pays every first-touch
            // page fault (about 80 ms of a million timers' first add) and the
            // ones after it none, so the order decided a share of the ratio.
            let warmUpDeadline = nowNanoseconds() + Self.budget
            _ = try onNewThread { HarborTimerCycle().run(count: count, spacing: Self.spacing, order: order, deadline: warmUpDeadline) }
            for round in 0..<rounds {
                var line = "  \(label) \(order.name) cycle \(round + 1)/\(rounds):"
                for offset in 0..<selected.count {
                    let index = (round + offset) % selected.count
                    let cycle = selected[index]
                    let deadline = nowNanoseconds() + Self.budget
                    let result = try onNewThread {
                        cycle.run(count: count, spacing: Self.spacing, order: order, deadline: deadline)
                    }
                    results[index].append(result)
                    line += " \(cycle.name) " + (result.total.map { formatMilliseconds($0.wall) + " ms" } ?? "gave up (\(result.gaveUp ?? "?"))")
                }
                progress(line)
            }
            rows.append(Row(size: label, count: count, order: order.name, results: results))
        }
        report(selected, rows)
    }

    private struct Row {
        var size: String
        var count: Int
        var order: String
        var results: [[TimerCycleResult]]
    }

    private func report(_ cycles: [any TimerCycle], _ rows: [Row]) {
        print("== \(name): \(summary)")
        print("   one-shot timers, fire dates \(Self.spacing / 1000) µs apart; random: added in a seeded random order of fire"
              + " dates and cancelled in another (the headline), ascending: added and cancelled in fire date order (CF's"
              + " best case); each cycle on a fresh thread;"
              + " implementations alternate; budget \(Self.budget / 1_000_000_000) s per cycle; CPUs allowed: \(allowedCPUs())")
        var header = "   " + pad("N", 6) + pad("order", 10) + pad("phase", 16)
        for cycle in cycles { header += pad(cycle.name + " ms", 15, right: true) }
        for cycle in cycles.dropFirst() { header += pad(cycle.name + "/harbor", 20, right: true) }
        print(header + pad("µs/timer", 30, right: true))
        let phases: [(String, (TimerCycleResult) -> PhaseCost?)] = [
            ("add", \.add), ("fire", \.fire), ("add (to cancel)", \.addForCancel), ("cancel", \.cancel), ("total", \.total),
        ]
        var resultLines: [String] = []
        for row in rows {
            let count = row.count
            for (phase, pick) in phases {
                var line = "   " + pad(row.size, 6) + pad(row.order, 10) + pad(phase, 16)
                let medians = row.results.map { cycleResults -> PhaseCost? in
                    let costs = cycleResults.compactMap(pick)
                    guard costs.count == cycleResults.count, !costs.isEmpty else { return nil }
                    return PhaseCost(wall: medianInt(costs.map(\.wall)), cpu: medianInt(costs.map(\.cpu)))
                }
                for median in medians { line += pad(median.map { formatMilliseconds($0.wall) } ?? "gave up", 15, right: true) }
                var perTimer: [String] = []
                for (index, median) in medians.enumerated() {
                    perTimer.append(median.map { formatFixed(Double($0.wall) / Double(count) / 1000, decimals: 3) } ?? "-")
                    let reference = medians[0]
                    var ratio = "-", roundRatio = "-"
                    if let median, let reference, reference.wall > 0 {
                        ratio = formatFixed(Double(median.wall) / Double(reference.wall), decimals: 2)
                        // Per-round ratios: cycle k of this implementation against cycle k of Harbor.
                        let pairs = zip(row.results[index], row.results[0]).compactMap { pair -> Double? in
                            guard let mine = pick(pair.0), let base = pick(pair.1), base.wall > 0 else { return nil }
                            return Double(mine.wall) / Double(base.wall)
                        }
                        roundRatio = formatFixed(medianOf(pairs), decimals: 2)
                        if index > 0 { line += pad(ratio + " (" + roundRatio + ")", 20, right: true) }
                    } else if index > 0 {
                        line += pad(median == nil ? "> " + formatFixed(Double(Self.budget) / Double(reference?.wall ?? 1), decimals: 0) : "-", 20, right: true)
                    }
                    let variant = "\(cycles[index].name)/\(row.order)/\(row.size)/\(phase.replacingSpaces())"
                    if let median {
                        resultLines.append("RESULT bench=\(name) variant=\(variant) median_us=\(median.wall.microseconds)"
                            + " ratio=\(ratio) round_ratio=\(roundRatio) cpu_us=\(median.cpu.microseconds) cpus=\(allowedCPUs())")
                    } else {
                        let why = row.results[index].compactMap(\.gaveUp).first ?? "?"
                        resultLines.append("RESULT bench=\(name) variant=\(variant)-gave-up median_us=\(Self.budget.microseconds)"
                            + " ratio=- round_ratio=- cpu_us=0 cpus=\(allowedCPUs()) gave_up=\"\(why)\"")
                    }
                }
                print(line + pad(perTimer.joined(separator: " / "), 30, right: true))
            }
        }
        print("   ms: median over cycles of the phase's wall time; X/harbor: ratio of the medians (median of per-cycle"
              + " ratios in brackets); µs/timer: wall time per timer, same order as the columns.")
        for cycle in cycles { print("   · \(cycle.name): \(cycle.label)") }
        print("   · add includes making the timer object; fire starts once every fire date has passed (the wait is"
              + " untimed) and ends when the last handler ran; cancel invalidates in the order's cancel order (ascending:"
              + " the order of adding, so CF's timer array finds each one at its front); releasing the timer objects is"
              + " not timed.")
        print("   · a cycle that exceeds the budget is abandoned: its row says \"gave up\" and its RESULT line carries"
              + " the budget as a lower bound.")
        for line in resultLines { print(line) }
        reportTargets(cycles, rows)
        fflush(nil)
    }

    /// The issue's targets: Harbor's total within 2 × the C heap and within
    /// 1.5 × sd-event, as ratios of the medians of the same run (and the
    /// median of per-cycle ratios, cycles alternating).
    private func reportTargets(_ cycles: [any TimerCycle], _ rows: [Row]) {
        let targets: [(name: String, limit: Double)] = [("c-heap", 2.0), ("sd-event", 1.5)]
        guard cycles.first?.name == "harbor" else { return }
        print("   targets (harbor ÷ reference, total; per-cycle median in brackets):")
        for row in rows {
            var line = "   " + pad(row.size, 6) + pad(row.order, 10)
            for target in targets {
                guard let index = cycles.firstIndex(where: { $0.name == target.name }) else { continue }
                let harbor = row.results[0].compactMap(\.total).map(\.wall)
                let other = row.results[index].compactMap(\.total).map(\.wall)
                guard !harbor.isEmpty, harbor.count == row.results[0].count else {
                    line += pad("harbor/\(target.name) - (harbor gave up)", 44)
                    continue
                }
                guard !other.isEmpty, other.count == row.results[index].count else {
                    // The reference passed its budget: the ratio is below harbor ÷ budget.
                    let bound = Double(medianInt(harbor)) / Double(Self.budget)
                    let met = bound <= target.limit ? "met" : "unknown"
                    line += pad("harbor/\(target.name) < \(formatFixed(bound, decimals: 2)) (it gave up) \(met)", 44)
                    print("RESULT bench=\(name) variant=harbor-over-\(target.name)/\(row.order)/\(row.size)/total"
                          + " median_us=\(medianInt(harbor).microseconds) ratio=<\(formatFixed(bound, decimals: 2))"
                          + " round_ratio=- target=\(target.limit) cpus=\(allowedCPUs())")
                    continue
                }
                let ratio = Double(medianInt(harbor)) / Double(max(1, medianInt(other)))
                let perCycle = medianOf(zip(harbor, other).map { Double($0) / Double(max(1, $1)) })
                let met = ratio <= target.limit ? "met" : "missed"
                line += pad("harbor/\(target.name) \(formatFixed(ratio, decimals: 2)) (\(formatFixed(perCycle, decimals: 2)))"
                            + " ≤ \(formatFixed(target.limit, decimals: 1)) \(met)", 44)
                print("RESULT bench=\(name) variant=harbor-over-\(target.name)/\(row.order)/\(row.size)/total"
                      + " median_us=\(medianInt(harbor).microseconds) ratio=\(formatFixed(ratio, decimals: 2))"
                      + " round_ratio=\(formatFixed(perCycle, decimals: 2)) target=\(target.limit) cpus=\(allowedCPUs())")
            }
            print(line)
        }
    }
}

/// The median of a few integers (the lower middle for an even count).
func medianInt(_ values: [Int64]) -> Int64 {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
}

/// Nanoseconds as milliseconds with two decimals.
func formatMilliseconds(_ nanoseconds: Int64) -> String { formatFixed(Double(nanoseconds) / 1e6, decimals: 2) }

extension String {
    fileprivate func replacingSpaces() -> String {
        String(map { $0 == " " ? "-" : $0 }).replacingParentheses()
    }
    private func replacingParentheses() -> String { String(filter { $0 != "(" && $0 != ")" }) }
}
