// Harbor — benchmark: one-way messages from this process to a peer, as fast as they go.

/// One-way throughput: batches of 64-byte messages, the peer acknowledging
/// each batch (so a sample is the time per message of one delivered batch).
struct CrossProcessThroughput: Benchmark {
    static let batch = 256
    let name = "cross-process-throughput"
    let summary = "one-way 64 B messages to another process (time per message; 1/this = messages per second)"
    let unit = "message"
    let iterations = (full: 100, quick: 30)
    var rounds: (full: Int, quick: Int)? { (20, 3) }

    let notes = [
        "Each sample: \(CrossProcessThroughput.batch) messages sent back to back, then one acknowledgement from the peer; "
            + "the sample is the batch's time divided by \(CrossProcessThroughput.batch). Throughput ratio = 1 / ×floor.",
        "floor: blocking write() of 64-byte packets on a SOCK_SEQPACKET pair, the peer read()s them (the socket "
            + "buffer is the queue; default 208 KiB).",
        "harbor: send(Message(id:body:)) of 64 bytes through a send right; the peer receive()s. The peer's port has "
            + "queue limit 1024 (a limit of 5 would make the sender wait for slots every few messages).",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let link = try PeerLink()
        return [WriteReadLoop(link: link), HarborOneWay(link: link)]
    }
}
