// Harbor — what a benchmark and each of its variants must provide to the harness.

/// Anything `harbor-bench` can run by name: a per-operation `Benchmark`
/// (the usual kind), or one that measures whole phases and reports them
/// itself (timers by the million, an idle loop's CPU time).
protocol RunnableBenchmark: Sendable {
    /// The command-line name, e.g. `cross-thread-round-trip`.
    var name: String { get }
    /// One line saying what is measured.
    var summary: String { get }
    /// Measures every variant in one process run and prints the report,
    /// ending with one `RESULT` line per figure for Scripts/bench.sh.
    func runAndReport(options: RunOptions, clockCost: Int64) throws
}

/// A benchmark: one piece of work done several ways (variants), one of them
/// the raw Linux floor, all measured alternately inside one process run.
///
/// To add a benchmark: write a type conforming to this protocol in its own
/// folder and add one line to `registeredBenchmarks` (Registry.swift).
protocol Benchmark: RunnableBenchmark {
    /// What one sample is, e.g. "round trip".
    var unit: String { get }
    /// Round trips (or operations) per variant per round, full and `--quick`.
    var iterations: (full: Int, quick: Int) { get }
    /// Lines printed under the results: what each variant is and why it is fair.
    var notes: [String] { get }
    /// Rounds per run, full and `--quick`, when the benchmark needs other
    /// than the harness's 40 and 3 (large payloads: fewer). nil: the default.
    var rounds: (full: Int, quick: Int)? { get }
    /// Unrecorded operations before each measurement; nil: max(10, iterations / 20).
    var warmUp: Int? { get }
    /// Fresh variants for one process run. Exactly one should be the floor.
    func makeVariants() throws -> [any BenchmarkVariant]
    /// A second variant to take ratios against, beside the floor (e.g. a
    /// Harbor loop standing alone, when the question is what nesting it
    /// costs); nil for none.
    var reference: String? { get }
}

extension Benchmark {
    var rounds: (full: Int, quick: Int)? { nil }
    var warmUp: Int? { nil }
}

/// One way of doing a benchmark's work.
///
/// The harness calls `start` once, then `measure` once per round (interleaved
/// with the other variants), then `stop`. `measure` appends one sample per
/// operation, in nanoseconds, after `warmUp` unrecorded operations.
protocol BenchmarkVariant: AnyObject {
    /// Short id used in the tables and in RESULT lines, e.g. `harbor`.
    var name: String { get }
    /// What it does, in a few words.
    var label: String { get }
    /// Whether ratios are taken against this variant.
    var isFloor: Bool { get }
    /// Whether this is one of the raw Linux ways (the floor among them); the
    /// report adds each variant's ratio to the best raw median of the run.
    var isRaw: Bool { get }
    func start() throws
    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws
    func stop()
}

extension Benchmark {
    var reference: String? { nil }

    func runAndReport(options: RunOptions, clockCost: Int64) throws {
        let results = try run(self, options: options)
        report(self, results, options: options, clockCost: clockCost)
    }
}

extension BenchmarkVariant {
    var isFloor: Bool { false }
    var isRaw: Bool { isFloor }
}

/// A variant failed in a way the benchmark cannot recover from.
struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Every variant's sampling loop: runs `body` `warmUp + iterations` times,
/// timing each run, and appends the last `iterations` times to `samples`,
/// each divided by `operations` (how many operations one run does).
@inline(__always)
func measureEach(
    iterations: Int, warmUp: Int, per operations: Int = 1, into samples: inout [Int64], _ body: () throws -> Void
) rethrows {
    for index in 0..<(warmUp + iterations) {
        let started = nowNanoseconds()
        try body()
        if index >= warmUp { samples.append((nowNanoseconds() - started) / Int64(operations)) }
    }
}
