// Harbor — the list of benchmarks `harbor-bench` knows; add one line per new benchmark.

/// Every benchmark, in the order `harbor-bench all` runs them.
let registeredBenchmarks: [any RunnableBenchmark] = [
    CrossThreadRoundTrip(),
    RunLoopPerformRoundTrip(),
    LoopTimers(),
    IdleLoop(),
    DescriptorFlood(),
    AsyncPortAwait(),
    MainQueueRoundTrip(),
    NestedPortRoundTrip(),
    NestedTimerFire(),
    BootstrapLookUp(),
    BootstrapRequestReply(),
]
