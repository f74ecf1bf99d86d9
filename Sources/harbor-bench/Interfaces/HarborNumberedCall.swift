// Harbor — benchmark: raw Harbor request/reply over one long-lived reply right, calls by number.
import Harbor

/// The raw reference for a session's reused reply port: the client holds a
/// send right to the peer's port and the peer one to the client's (each made
/// once, as a session's are at connect); each request's last 8 bytes are a
/// call number, the peer echoes the body, and the client checks the reply's
/// number is the call's. What `HarborXPC`'s numbered call is built on.
final class HarborNumberedCall: BenchmarkVariant {
    let name = "harbor-numbered"
    let label = "send right each way, made once; a call number in the body, checked on the reply"
    private let link: PeerLink
    private var payload: [UInt8]
    private var number: UInt64 = 0

    init(link: PeerLink, size: Int) {
        self.link = link
        payload = [UInt8](repeating: 7, count: size)
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        link.begin(.harborEcho, count: warmUp + iterations)
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            number &+= 1
            let count = payload.count
            withUnsafeBytes(of: number.littleEndian) { bytes in
                for index in 0..<8 { payload[count - 8 + index] = bytes[index] }
            }
            try link.toPeer.send(Message(id: 1, body: payload))
            let reply = try link.home.receive()
            let body = reply.body
            guard body.count == count else { throw BenchmarkFailure("short reply") }
            var answered: UInt64 = 0
            for index in (count - 8)..<count { answered = answered >> 8 | UInt64(body[index]) << 56 }
            guard answered == number else { throw BenchmarkFailure("reply to call \(answered), not \(number)") }
        }
        try link.end()
    }

    func stop() {}
}
