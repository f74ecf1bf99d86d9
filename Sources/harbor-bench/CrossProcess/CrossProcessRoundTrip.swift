// Harbor — benchmark: a request and its reply between two processes, Harbor beside SOCK_SEQPACKET and sd-bus.

/// One request of `size` bytes and a reply of the same size between this
/// process and a peer process: Harbor's ports beside the raw SEQPACKET
/// ping-pong (the floor) and sd-bus over a socket pair.
struct CrossProcessRoundTrip: Benchmark {
    let size: Int
    var name: String { size == 64 ? "cross-process-round-trip" : "cross-process-round-trip-\(size / 1024)k" }
    var summary: String { "request + reply of \(size) B each between two processes" }
    let unit = "round trip"
    let iterations = (full: 1000, quick: 300)

    var notes: [String] {
        [
            "floor: plain AF_UNIX SOCK_SEQPACKET socket pair, non-blocking, each side in its own epoll set: "
                + "send, epoll_wait, recv (no Harbor code).",
            "floor-passcred: the floor on a pair with SO_PASSCRED (the kernel attaches the sender's credentials, "
                + "which Harbor's trailer reports), received with recvmsg and a control buffer. Not the ratio's floor.",
            "harbor: each side holds a send right to the other (made once); the client sends Message(id:body:) "
                + "and blocks in receive() on its port, the peer receives and sends the body back.",
            "sdbus: libsystemd sd-bus, direct connection (server bus on the peer's end of a SOCK_STREAM pair, "
                + "sd_bus_set_server), client sd_bus_call of a method taking and returning `ay` of \(size) B.",
            "One peer process (harbor-bench re-executed) serves every variant on its main thread, in the same "
                + "rotating order as the client; its CPU time is not in CPU µs (this process only).",
        ]
    }

    func makeVariants() throws -> [any BenchmarkVariant] {
        let link = try PeerLink()
        return [
            SeqPacketPingPong(link: link, size: size),
            SeqPacketPingPong(link: link, size: size, passCredentials: true),
            HarborRemoteEcho(link: link, size: size),
            SDBusRoundTrip(link: link, size: size),
        ]
    }
}
