// Harbor — the codable-message benchmark's HarborCoding sampling loop.
import Harbor
import HarborCoding

/// Samples `MessageEncoder().encode` + `MessageDecoder().decode` of
/// `value`, 16 round trips a sample, each checked with `matches`; throws
/// the last failure after sampling.
@inline(__always)
func measureHarborCodingRoundTrips<Value: Codable>(
    of value: Value, iterations: Int, warmUp: Int, into samples: inout [Int64], matches: (Value) -> Bool
) throws {
    var failure: (any Error)?
    let encoder = MessageEncoder()
    let decoder = MessageDecoder()
    measureEach(iterations: iterations, warmUp: warmUp, per: 16, into: &samples) {
        for _ in 0..<16 {
            do {
                var message = try encoder.encode(value, id: 3)
                let back = try decoder.decode(Value.self, from: &message)
                if !matches(back) { failure = BenchmarkFailure("the coded \(Value.self) came back different") }
            } catch {
                failure = error
            }
        }
    }
    if let failure { throw failure }
}
