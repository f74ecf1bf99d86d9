// Harbor — Harbor's request/reply across processes: a send right each way, made once.
import Harbor

/// The client sends to the peer's port and blocks in `receive()` on its own
/// port; the peer answers through a send right it was given at start.
final class HarborRemoteEcho: BenchmarkVariant {
    let name = "harbor"
    let label = "send right each way; send(Message(id:body:)), receive()"
    private let link: PeerLink
    private let payload: [UInt8]

    init(link: PeerLink, size: Int) {
        self.link = link
        payload = [UInt8](repeating: 7, count: size)
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.harborEcho, count: warmUp + iterations)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            try link.toPeer.send(Message(id: 1, body: payload))
            let reply = try link.home.receive()
            guard reply.body.count == payload.count else { throw BenchmarkFailure("short reply") }
        }
        try link.end()
    }

    func stop() {}
}
