// Harbor — benchmark: a request and its reply between two threads, through ports and their peers.

/// One request and one reply between two threads, the client blocking for
/// the reply: Harbor's ports beside the raw eventfd/epoll ping-pong floor,
/// Foundation's run loops and NSCondition, and Dispatch queues.
struct CrossThreadRoundTrip: Benchmark {
    let name = "cross-thread-round-trip"
    let summary = "request + reply between two threads (send, receive, reply)"
    let unit = "round trip"
    let iterations = (full: 1000, quick: 300)

    let notes = [
        "floor: what any design must pay: each side wakes the other with one eventfd write "
            + "and sleeps in epoll_wait, then reads its eventfd (3 syscalls per side per trip).",
        "harbor*: server thread blocks in ReceiveRight.receive(), answers through the request's "
            + "reply right; the client sends and blocks in receive() on its own port.",
        "harbor-tapped: harbor-norights with a PortTap armed on both ports (64-byte body prefix), "
            + "the client reading both taps' records after each round trip (Docs/Capture.md).",
        "foundation-runloop: Foundation on Linux has no working cross-thread Port (MessagePort is "
            + "unimplemented; a SocketPort round trip hung here), so both sides run a RunLoop and post "
            + "to the other with RunLoop.perform + CFRunLoopWakeUp (perform alone does not wake a "
            + "sleeping loop); the reply block stops the client's run(mode:before:).",
        "foundation-condition: NSCondition ping-pong, the blocking Foundation primitive closest to receive().",
        "dispatch-chain: two serial DispatchQueues, each reply is an async back to the client queue; "
            + "Dispatch may run both on one worker and so skip a cross-CPU wake-up.",
        "dispatch-semaphore: client thread does server.async { semaphore.signal() }; semaphore.wait().",
        "floor, harbor*, foundation-* share one client thread (main) and one server thread.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let server = try SharedServerThread(name: "bench-server")
        return [
            EventfdPingPong(server: server),
            HarborRoundTrip(.sendOnceReply, server: server),
            HarborRoundTrip(.sendRightReply, server: server),
            HarborRoundTrip(.fixedRights, server: server),
            HarborRoundTrip(.tapped, server: server),
            RunLoopPingPong(server: server),
            ConditionPingPong(server: server),
            DispatchChainPingPong(),
            DispatchSemaphorePingPong(),
        ]
    }
}
