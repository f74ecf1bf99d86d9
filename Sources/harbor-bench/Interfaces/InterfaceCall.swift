// Harbor — benchmark: a typed call and a distributed-actor call across processes, beside raw Harbor, sd-bus and gRPC.

/// Issue 23's interface layer against its references, in one run: a typed
/// call (`HarborXPC`) and a distributed-actor call (`HarborDistributed`)
/// to another process, beside the raw Harbor request/reply they are built
/// on, the raw SEQPACKET floor, sd-bus method calls over a direct
/// connection, and (when `grpc-peer` is built) grpc-swift 2 unary calls
/// over a Unix-domain socket. Prints the goals as per-round ratios.
struct InterfaceCall: Benchmark {
    let name = "interface-call"
    let summary = "typed (XPC) and distributed-actor calls across processes vs raw Harbor, sd-bus, gRPC"
    let unit = "call"
    let iterations = (full: 1000, quick: 200)
    let reference: String? = "harbor-sendonce"

    var notes: [String] {
        [
            "floor: raw AF_UNIX SOCK_SEQPACKET ping-pong of 64 B to the peer process (no Harbor code).",
            "harbor: raw Harbor messages without a reply right: each side holds a send right to the other "
                + "(made once), Message(id:body:) of 64 B each way.",
            "harbor-sendonce (the reference, raw Harbor request/reply): Message(id:body:) of 64 B with a fresh "
                + "send-once reply right; the peer's main thread receives and message.reply()s; the client receives "
                + "on its port.",
            "harbor-numbered (the raw reference for a reused reply port): as harbor, a send right each way made "
                + "once, and the request's last 8 bytes a call number, echoed by the peer and checked by the client.",
            "xpc: EchoCall { sequence: Int, data: [UInt8] (64 B) } through XPCSession.sendSync, decoded with "
                + "decode(as:); the peer's XPCListener (checked in with a private harbord) answers it from its "
                + "session's thread. The session's one reply port (given to the listener at connect) gets every reply, "
                + "matched to its call by number, as HarborXPC does.",
            "xpc-async: the same call as `try await session.send(_:)` (no thread per call: the session's reply "
                + "thread receives the reply and resumes the task), the calls in one task on the concurrency pool.",
            "actor: the same EchoCall through `try await remote.echo(_:)` on a distributed actor the peer hosts "
                + "(HarborActorSystem, registered with the private harbord, resolved by name); the calls run in one "
                + "task, each sample one await.",
            "actor-system: the same calls in a task that prefers the client system's thread "
                + "(Task(executorPreference: system.taskExecutor)): each answer resumes the caller on the thread "
                + "that received it, with no hand-off to the concurrency pool.",
            "sdbus: sd_bus_call of a method echoing `ay` of 64 B over a direct sd-bus connection (no dbus-daemon).",
            "grpc: grpc-swift 2.4 unary echo of 64 B over a Unix-domain socket (HTTP/2, plaintext, hand-written "
                + "byte serializers, no protobuf) between two grpc-peer processes (Benchmarks/grpc-peer, set "
                + "HARBOR_BENCH_GRPC_PEER); its client times each call and sends the times back.",
            "CPU µs counts this process only (the peer's and grpc-peer's are not in it).",
        ]
    }

    func makeVariants() throws -> [any BenchmarkVariant] {
        let fixture = try BootstrapFixture()
        let link = try PeerLink()
        try link.startInterfaces(socketPath: fixture.socketPath)
        var variants: [any BenchmarkVariant] = [
            SeqPacketPingPong(link: link, size: 64),
            HarborRemoteEcho(link: link, size: 64),
            HarborRightRoundTrip(link: link, sendOnce: true),
            HarborNumberedCall(link: link, size: 64),
            XPCTypedCall(socketPath: fixture.socketPath, fixture: fixture),
            XPCTypedCall(socketPath: fixture.socketPath, fixture: fixture, isAsync: true),
            ActorCall(socketPath: fixture.socketPath, fixture: fixture),
            ActorCall(socketPath: fixture.socketPath, fixture: fixture, onSystemThread: true),
            SDBusRoundTrip(link: link, size: 64),
        ]
        GRPCUnaryCall.clientCPU = []
        if let executable = GRPCUnaryCall.executable { variants.append(GRPCUnaryCall(executable: executable)) }
        return variants
    }

    func runAndReport(options: RunOptions, clockCost: Int64) throws {
        let results = try run(self, options: options)
        report(self, results, options: options, clockCost: clockCost)
        if !GRPCUnaryCall.clientCPU.isEmpty {
            let cpu = GRPCUnaryCall.clientCPU.sorted()[GRPCUnaryCall.clientCPU.count / 2]
            print("   grpc client process CPU µs per call (median over rounds): \(cpu.microseconds)")
        } else if options.only.isEmpty || options.only.contains("grpc") {
            print("   grpc: not measured (build Benchmarks/grpc-peer and set HARBOR_BENCH_GRPC_PEER; Scripts/bench.sh --grpc)")
        }
        // The goals, each a ratio of two variants per round (median and range over rounds).
        let goals: [(numerator: String, denominator: String, goal: String)] = [
            ("xpc", "harbor-sendonce", "≤ 1.3"),
            ("actor", "harbor-sendonce", "≤ 1.5"),
            ("actor-system", "harbor-sendonce", "≤ 1.5"),
            ("sdbus", "xpc", "≥ 1.5"),
            ("grpc", "xpc", "≥ 5"),
            ("xpc-async", "harbor-sendonce", ""),
            ("xpc", "harbor-numbered", ""),
            ("actor", "harbor-numbered", ""),
            ("xpc", "harbor", ""),
            ("actor", "harbor", ""),
            ("grpc", "harbor-sendonce", ""),
        ]
        print("   goals (per-round ratio, median (min–max) over rounds):")
        for (numerator, denominator, goal) in goals {
            guard let top = results.first(where: { $0.name == numerator }),
                  let bottom = results.first(where: { $0.name == denominator }) else { continue }
            let perRound = zip(top.roundMedians, bottom.roundMedians).map { Double($0) / Double(max($1, 1)) }
            guard let low = perRound.min(), let high = perRound.max() else { continue }
            let median = medianOf(perRound)
            print("     \(numerator) ÷ \(denominator): " + formatFixed(median, decimals: 2) + " ("
                  + formatFixed(low, decimals: 2) + "–" + formatFixed(high, decimals: 2) + ")"
                  + (goal.isEmpty ? "" : "   goal \(goal)"))
            print("RESULT bench=\(name) variant=\(numerator)-over-\(denominator) median_us=0 p99_us=0 ratio="
                  + formatFixed(median, decimals: 2) + " p99_ratio=0 round_ratio=" + formatFixed(median, decimals: 2)
                  + " cpu_us=0")
        }
    }
}
