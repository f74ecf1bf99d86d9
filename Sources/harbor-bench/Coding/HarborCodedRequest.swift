// Harbor — the codable-message benchmark's HarborCoding variants.
import Harbor
import HarborCoding

/// `MessageEncoder().encode` and `MessageDecoder().decode`: the request as
/// a Codable value, its send right (if any) a field carried as a right.
final class HarborCodedRequest: BenchmarkVariant {
    let name: String
    let label: String
    private let withRight: Bool
    private var request: ClockRequest?
    private var port: ReceiveRight?

    init(withRight: Bool) {
        self.withRight = withRight
        name = withRight ? "harbor-coding+right" : "harbor-coding"
        label = withRight ? "MessageEncoder/Decoder, the send right a field" : "MessageEncoder/MessageDecoder"
    }

    func start() throws {
        let port = ReceiveRight()
        request = ClockRequest.sample(events: withRight ? port.makeSendRight() : nil)
        self.port = consume port
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let request else { throw BenchmarkFailure("measure before start") }
        try measureHarborCodingRoundTrips(of: request, iterations: iterations, warmUp: warmUp, into: &samples) {
            $0.matches(request)
        }
    }

    func stop() {
        request = nil
        port = nil
    }
}
