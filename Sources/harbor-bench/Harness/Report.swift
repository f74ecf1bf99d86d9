// Harbor — prints a benchmark's results as a table a person can paste into an issue.
import Glibc

/// Prints the table, the notes, and one `RESULT` line per variant for Scripts/bench.sh.
func report(_ benchmark: any Benchmark, _ results: [VariantResult], options: RunOptions, clockCost: Int64) {
    let floor = results.first(where: \.isFloor)
    let floorStats = floor.map { Statistics($0.samples) }
    let rounds = results.first?.roundMedians.count ?? 0
    let iterations = options.effectiveIterations(for: benchmark)
    let cpus = allowedCPUs()

    print("== \(benchmark.name): \(benchmark.summary)")
    print("   \(rounds) rounds × \(iterations) \(benchmark.unit)s per variant, variants interleaved;"
          + " CPUs allowed: \(cpus); clock read \(clockCost) ns")
    print("   " + pad("variant", 20) + pad("median µs", 11, right: true) + pad("p99 µs", 10, right: true)
          + pad("×floor", 9, right: true) + pad("p99 ×floor", 12, right: true)
          + pad("round ×floor med (min–max)", 27, right: true) + pad("CPU µs", 9, right: true) + "   what")
    for result in results {
        let stats = Statistics(result.samples)
        var ratio = "-", tailRatio = "-", roundRange = "-"
        if let floor, let floorStats, floorStats.median > 0 {
            ratio = formatFixed(Double(stats.median) / Double(floorStats.median), decimals: 2)
            tailRatio = formatFixed(Double(stats.p99) / Double(floorStats.p99), decimals: 2)
            let perRound = zip(result.roundMedians, floor.roundMedians).map { Double($0) / Double($1) }
            if let low = perRound.min(), let high = perRound.max() {
                roundRange = formatFixed(medianOf(perRound), decimals: 2) + " (" + formatFixed(low, decimals: 2)
                    + "–" + formatFixed(high, decimals: 2) + ")"
            }
        }
        print("   " + pad(result.name, 20) + pad(stats.median.microseconds, 11, right: true)
              + pad(stats.p99.microseconds, 10, right: true) + pad(ratio, 9, right: true)
              + pad(tailRatio, 12, right: true) + pad(roundRange, 27, right: true)
              + pad(Statistics(result.roundCPU).median.microseconds, 9, right: true) + "   " + result.label)
    }
    print("   ×floor: medians pooled over all rounds; round ×floor: median and range of the per-round ratios"
          + " (each round measures every variant back to back, so this one best survives a change of wake-up regime"
          + " mid-run);"
          + " CPU µs: process CPU time (all threads) per \(benchmark.unit), median over rounds.")
    let reference = benchmark.reference.flatMap { name in results.first { $0.name == name } }
    if let reference {
        let referenceStats = Statistics(reference.samples)
        for result in results where !result.isFloor && result.name != reference.name {
            let ratios = referenceRatios(result, reference, referenceStats)
            print("   \(result.name) ×\(reference.name): median " + formatFixed(ratios.median, decimals: 2)
                  + ", p99 " + formatFixed(ratios.p99, decimals: 2) + ", per round " + formatFixed(ratios.round, decimals: 2)
                  + " (" + formatFixed(ratios.low, decimals: 2) + "–" + formatFixed(ratios.high, decimals: 2) + ")")
        }
    }
    // Where several raw ways exist (payloads), the target is the better of them.
    let rawMedians = results.filter(\.isRaw).map { Statistics($0.samples).median }
    let bestRaw = rawMedians.count > 1 ? rawMedians.min() : nil
    if let bestRaw, bestRaw > 0 {
        let best = results.first { $0.isRaw && Statistics($0.samples).median == bestRaw }!
        var line = "   × best raw (\(best.name), median of this run):"
        for result in results where !result.isRaw {
            line += " \(result.name) " + formatFixed(Double(Statistics(result.samples).median) / Double(bestRaw), decimals: 2)
        }
        print(line)
    }
    for note in benchmark.notes { print("   · " + note) }
    for result in results {
        let stats = Statistics(result.samples)
        var line = "RESULT bench=\(benchmark.name) variant=\(result.name)"
            + " median_us=\(stats.median.microseconds) p99_us=\(stats.p99.microseconds)"
        if let floorStats, floorStats.median > 0 {
            line += " ratio=\(formatFixed(Double(stats.median) / Double(floorStats.median), decimals: 2))"
            line += " p99_ratio=\(formatFixed(Double(stats.p99) / Double(floorStats.p99), decimals: 2))"
            if let floor {
                let perRound = zip(result.roundMedians, floor.roundMedians).map { Double($0) / Double($1) }
                line += " round_ratio=\(formatFixed(medianOf(perRound), decimals: 2))"
            }
        }
        if let reference, result.name != reference.name, !result.isFloor {
            let ratios = referenceRatios(result, reference, Statistics(reference.samples))
            line += " ref=\(reference.name) ref_ratio=\(formatFixed(ratios.median, decimals: 2))"
            line += " p99_ref_ratio=\(formatFixed(ratios.p99, decimals: 2))"
            line += " round_ref_ratio=\(formatFixed(ratios.round, decimals: 2))"
        }
        if let bestRaw, bestRaw > 0 {
            line += " best_raw_ratio=\(formatFixed(Double(stats.median) / Double(bestRaw), decimals: 2))"
        }
        print(line + " cpu_us=\(Statistics(result.roundCPU).median.microseconds) cpus=\(cpus)")
    }
    fflush(nil)  // every output stream: the report must precede the next run's progress
}

/// `result` against the benchmark's reference variant: pooled median and
/// p99 ratios, and the median and range of the per-round median ratios.
private func referenceRatios(
    _ result: VariantResult, _ reference: VariantResult, _ referenceStats: Statistics
) -> (median: Double, p99: Double, round: Double, low: Double, high: Double) {
    let stats = Statistics(result.samples)
    let perRound = zip(result.roundMedians, reference.roundMedians).map { Double($0) / Double(max($1, 1)) }
    return (Double(stats.median) / Double(max(referenceStats.median, 1)),
            Double(stats.p99) / Double(max(referenceStats.p99, 1)),
            medianOf(perRound), perRound.min() ?? 0, perRound.max() ?? 0)
}

/// The CPUs this process may run on, as the kernel lists them ("0-1", "0").
func allowedCPUs() -> String {
    guard let file = fopen("/proc/self/status", "r") else { return "?" }
    defer { fclose(file) }
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, file) > 0, let line {
        let text = String(cString: line)
        if text.hasPrefix("Cpus_allowed_list:") {
            return text.dropFirst("Cpus_allowed_list:".count).trimmingCharacters()
        }
    }
    return "?"
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == "\n" || $0 == " " }).reversed())
    }
}

/// The median of a few ratios (the mean of the middle two for an even count).
func medianOf(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
