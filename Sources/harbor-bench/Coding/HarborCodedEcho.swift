// Harbor — the codable-message benchmark's variant coding interface-call's EchoCall.
import Harbor
import HarborCoding

/// `MessageEncoder().encode` and `MessageDecoder().decode` of the value a
/// typed call and a distributed-actor call carry each way in
/// `interface-call`: `EchoCall { sequence: Int, data: [UInt8] }`, 64 bytes.
final class HarborCodedEcho: BenchmarkVariant {
    let name = "harbor-coding-echo"
    let label = "MessageEncoder/Decoder of interface-call's EchoCall (64 bytes)"
    private var call: EchoCall?

    func start() throws {
        call = EchoCall(sequence: 42, data: (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37) })
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let call else { throw BenchmarkFailure("measure before start") }
        try measureHarborCodingRoundTrips(of: call, iterations: iterations, warmUp: warmUp, into: &samples) {
            $0.sequence == call.sequence && $0.data == call.data
        }
    }

    func stop() { call = nil }
}
