// Harbor — the one-way floor: a plain write/read loop over a SOCK_SEQPACKET pair.
import CHarborLinux
import Glibc

/// Blocking `write` of each packet; the peer's blocking `read`; one
/// acknowledgement packet per batch.
final class WriteReadLoop: BenchmarkVariant {
    let name = "floor"
    let label = "raw blocking write() / read() of 64 B SEQPACKET packets"
    let isFloor = true
    private let link: PeerLink
    private var packet = [UInt8](repeating: 7, count: 64)

    init(link: PeerLink) { self.link = link }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.floorStream, count: warmUp + iterations, size: 64, extra: CrossProcessThroughput.batch)
        let fd = link.bulk
        try packet.withUnsafeMutableBytes { bytes in
            try measureEach(iterations: iterations, warmUp: warmUp, per: CrossProcessThroughput.batch, into: &samples) {
                for _ in 0..<CrossProcessThroughput.batch {
                    guard write(fd, bytes.baseAddress, 64) == 64 else { throw BenchmarkFailure("write: errno \(charbor_errno())") }
                }
                var ack: UInt8 = 0
                guard read(fd, &ack, 1) == 1 else { throw BenchmarkFailure("ack read: errno \(charbor_errno())") }
            }
        }
        try link.end()
    }

    func stop() {}
}
