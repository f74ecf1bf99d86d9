// Harbor — runs a benchmark's variants alternately, round after round, in one process.
//
// Waking a thread on the other CPU costs about 5 µs in one process run and
// 12 µs in the next on this kind of machine. Comparing numbers from separate
// runs would mostly measure that lottery, so every variant is measured in
// every round, in an order that rotates each round, and ratios are taken
// between numbers from the same run.

/// How long to run.
struct RunOptions {
    var quick = false
    var rounds: Int?
    var iterations: Int?
    /// Variant names to run (the floor always runs); empty runs them all.
    var only: Set<String> = []

    var effectiveRounds: Int { rounds ?? (quick ? 3 : 40) }
    func effectiveRounds(for benchmark: any Benchmark) -> Int {
        rounds ?? benchmark.rounds.map { quick ? $0.quick : $0.full } ?? effectiveRounds
    }
    func effectiveIterations(for benchmark: any Benchmark) -> Int {
        iterations ?? (quick ? benchmark.iterations.quick : benchmark.iterations.full)
    }
}

/// Everything measured for one variant in one process run.
struct VariantResult {
    let name: String
    let label: String
    let isFloor: Bool
    let isRaw: Bool
    var samples: [Int64] = []
    var roundMedians: [Int64] = []
    /// Process CPU time (both threads) per operation, one value per round.
    var roundCPU: [Int64] = []
}

func run(_ benchmark: any Benchmark, options: RunOptions) throws -> [VariantResult] {
    let variants = try benchmark.makeVariants().filter { options.only.isEmpty || $0.isFloor || options.only.contains($0.name) }
    let rounds = options.effectiveRounds(for: benchmark)
    let iterations = options.effectiveIterations(for: benchmark)
    let warmUp = benchmark.warmUp ?? max(10, iterations / 20)
    var results = variants.map { VariantResult(name: $0.name, label: $0.label, isFloor: $0.isFloor, isRaw: $0.isRaw) }
    for index in results.indices { results[index].samples.reserveCapacity(rounds * iterations) }

    var started: [any BenchmarkVariant] = []
    defer { for variant in started.reversed() { variant.stop() } }
    for variant in variants {
        try variant.start()
        started.append(variant)
    }

    progress("\(benchmark.name): \(rounds) rounds × \(variants.count) variants × \(iterations) \(benchmark.unit)s")
    for round in 0..<rounds {
        var line = "  round \(pad(String(round + 1), 2, right: true))/\(rounds):"
        for offset in 0..<variants.count {
            let index = (round + offset) % variants.count
            var samples: [Int64] = []
            samples.reserveCapacity(iterations)
            let cpuBefore = processCPUNanoseconds()
            try variants[index].measure(iterations: iterations, warmUp: warmUp, into: &samples)
            let cpu = (processCPUNanoseconds() - cpuBefore) / Int64(warmUp + iterations)
            results[index].roundCPU.append(cpu)
            let median = Statistics(samples).median
            results[index].samples.append(contentsOf: samples)
            results[index].roundMedians.append(median)
        }
        for result in results { line += " \(result.name) \(result.roundMedians.last!.microseconds)" }
        progress(line + " (µs, median)")
    }
    return results
}

/// Progress goes to standard error so standard output stays a clean report.
func progress(_ line: String) {
    var stream = StandardError()
    print(line, to: &stream)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var copy = string
        copy.withUTF8 { bytes in _ = Glibc.write(2, bytes.baseAddress, bytes.count) }
    }
}

import Glibc
