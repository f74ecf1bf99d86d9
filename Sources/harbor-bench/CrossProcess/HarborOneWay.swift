// Harbor — Harbor's one-way sends to a port in another process.
import Harbor

/// `send` of 64-byte messages through a send right; the peer acknowledges
/// each batch on the client's port.
final class HarborOneWay: BenchmarkVariant {
    let name = "harbor"
    let label = "send(Message(id:body:)) of 64 B through a send right; peer receive()"
    private let link: PeerLink
    private let payload = [UInt8](repeating: 7, count: 64)

    init(link: PeerLink) { self.link = link }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.harborStream, count: warmUp + iterations, size: 64, extra: CrossProcessThroughput.batch)
        try measureEach(iterations: iterations, warmUp: warmUp, per: CrossProcessThroughput.batch, into: &samples) {
            for _ in 0..<CrossProcessThroughput.batch { try link.toPeer.send(Message(id: 1, body: payload)) }
            _ = try link.home.receive()
        }
        try link.end()
    }

    func stop() {}
}
