// Harbor — benchmark: a port round trip through a Harbor loop standing alone and nested in sd-event (S01).

/// A client thread sends a request to a `PortSource` on the server thread's
/// Harbor loop and blocks for the reply. The same loop on the same thread
/// runs standing alone (`Loop.run`) and nested in sd-event
/// (`LoopInsideSDEvent` + `SDEventLoop.runUntilExit`), rounds interleaved;
/// the target is nested ≤ 1.2 × standalone.
struct NestedPortRoundTrip: Benchmark {
    let name = "sd-event-port"
    let summary = "port round trip through a Harbor loop nested in sd-event vs standing alone"
    let unit = "round trip"
    let iterations = (full: 1000, quick: 300)
    let reference: String? = "loop-alone"

    let notes = [
        "floor: the raw eventfd write + epoll_wait + read ping-pong of cross-thread-round-trip.",
        "loop-alone: the server thread runs its Harbor Loop (run(mode: .default, timeout: nil, …)) with one "
            + "PortSource; its handler sends the reply to the client's port through a send right made once; "
            + "the client (main thread) sends and blocks in receive().",
        "loop-in-sd-event: the same loop and PortSource on the same thread, driven by sd-event "
            + "(LoopInsideSDEvent, SDEventLoop.runUntilExit()): sd-event sleeps, then runs one Harbor pass.",
        "raw-alone, raw-in-host: the floor's ping-pong with the server's eventfd behind the epoll sets a "
            + "Harbor port has (readiness set inside the mode's set), and with the host's set around them plus "
            + "the nested pass's non-blocking epoll_wait: what the kernel alone charges for nesting.",
        "×loop-alone: the issue's ratio (target ≤ 1.2): pooled medians, and the per-round ratios.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let server = try SharedServerThread(name: "bench-nest-server")
        return [
            EventfdPingPong(server: server),
            RawNestedPingPong(inHost: false, server: server),
            RawNestedPingPong(inHost: true, server: server),
            NestedPortServer(nested: false, server: server),
            NestedPortServer(nested: true, server: server),
        ]
    }
}
