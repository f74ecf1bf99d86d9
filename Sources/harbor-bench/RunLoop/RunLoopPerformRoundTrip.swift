// Harbor — benchmark: a block posted to another thread's run loop, which posts one back.

/// A cross-thread `perform` round trip: the client posts a block to the
/// server's loop, that block posts one back to the client's loop, and the
/// client's loop runs it. Harbor's `Loop.perform` beside the raw eventfd
/// ping-pong floor, Foundation's `RunLoop.perform` (+ `CFRunLoopWakeUp`) and
/// two Dispatch serial queues.
struct RunLoopPerformRoundTrip: Benchmark {
    let name = "run-loop-perform"
    let summary = "perform round trip between two threads' run loops (post, wake, run, post back)"
    let unit = "round trip"
    let iterations = (full: 1000, quick: 300)

    let notes = [
        "floor: the same eventfd write + epoll_wait + read ping-pong as cross-thread-round-trip: "
            + "the least a descriptor-based wake-up costs.",
        "harbor-perform: both threads run a Harbor Loop in .default (kept alive by a never-signalled "
            + "LoopSource); the client posts with Loop.perform and runs run(mode:before:) until the reply "
            + "block ran (a performed block counts as a handled source, so that run returns).",
        "harbor-performAndWait: the client has no loop; it blocks in server.performAndWait {} (a posted "
            + "block plus a parked caller).",
        "foundation-runloop: both threads run a Foundation RunLoop; each post is RunLoop.perform followed by "
            + "CFRunLoopWakeUp, because on Linux perform alone does not wake a sleeping loop.",
        "dispatch-chain: two serial DispatchQueues; no descriptor, and its workers spin before parking.",
        "floor, harbor-*, foundation-runloop share one client thread (main) and one server thread.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let server = try SharedServerThread(name: "bench-loop-server")
        return [
            EventfdPingPong(server: server),
            HarborPerformPingPong(.bothLoops, server: server),
            HarborPerformPingPong(.blockingClient, server: server),
            RunLoopPingPong(server: server),
            DispatchChainPingPong(),
        ]
    }
}
