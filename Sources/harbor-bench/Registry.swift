// Harbor — the list of benchmarks `harbor-bench` knows; add one line per new benchmark.

/// Every benchmark, in the order `harbor-bench all` runs them.
let registeredBenchmarks: [any Benchmark] = [
    CrossThreadRoundTrip(),
    CrossProcessRoundTrip(size: 64),
    CrossProcessRoundTrip(size: 4096),
]
