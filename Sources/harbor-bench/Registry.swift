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
    CrossProcessRoundTrip(size: 64),
    CrossProcessRoundTrip(size: 4096),
    CrossProcessThroughput(),
    CrossProcessRights(),
    CrossProcessPayload(size: 64 << 10),
    CrossProcessPayload(size: 1 << 20),
    CrossProcessPayload(size: 16 << 20),
    CrossProcessPayload(size: 256 << 20),
    CodableMessage(),
    InterfaceCall(),
]
