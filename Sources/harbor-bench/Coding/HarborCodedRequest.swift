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
        var failure: (any Error)?
        let encoder = MessageEncoder()
        let decoder = MessageDecoder()
        measureEach(iterations: iterations, warmUp: warmUp, per: 16, into: &samples) {
            for _ in 0..<16 {
                do {
                    var message = try encoder.encode(request, id: 3)
                    let back = try decoder.decode(ClockRequest.self, from: &message)
                    if !back.matches(request) { failure = BenchmarkFailure("the coded request came back different") }
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    func stop() {
        request = nil
        port = nil
    }
}
