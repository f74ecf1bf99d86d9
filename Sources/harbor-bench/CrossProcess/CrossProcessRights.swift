// Harbor — benchmark: a round trip whose request carries one right (a descriptor) to another process.

/// A request carrying one right, and a reply: Harbor's send-once reply
/// right and an attached send right beside a plain SCM_RIGHTS round trip.
struct CrossProcessRights: Benchmark {
    let name = "cross-process-right"
    let summary = "round trip whose 64 B request carries one right to another process"
    let unit = "round trip"
    let iterations = (full: 500, quick: 200)

    let notes = [
        "floor: the raw shape of a reply right: socketpair(), send one end in SCM_RIGHTS with a 64 B packet, "
            + "close it; the peer replies through the received socket and closes it; the client waits in epoll_wait "
            + "(the new end added to its set) and recv()s.",
        "harbor-sendonce: the request carries a fresh send-once reply right; the peer calls message.reply(). "
            + "Across processes a send-once right is a connection of its own (socket pair, SO_PASSCRED, epoll_ctl).",
        "harbor-sendright: the request carries a copy of a send right to the client's port (a new connection per "
            + "send; the peer already knows the port, so it closes the new descriptors); the reply goes through "
            + "the peer's fixed send right.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let link = try PeerLink()
        return [RightsPingPong(link: link), HarborRightRoundTrip(link: link, sendOnce: true),
                HarborRightRoundTrip(link: link, sendOnce: false)]
    }
}
