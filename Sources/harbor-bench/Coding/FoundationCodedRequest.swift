// Harbor — the codable-message benchmark's peers: Foundation's JSON and property-list coders.
import Foundation
import Harbor

/// The nearest peer: the same Codable request through Foundation's
/// `JSONEncoder`/`JSONDecoder` or binary `PropertyListEncoder`/`Decoder`
/// (coders made once), its bytes as the message's body. Neither can carry
/// a right, so these code the request without one.
final class FoundationCodedRequest: BenchmarkVariant {
    enum Format { case json, propertyList }

    let name: String
    let label: String
    private let format: Format
    private var request: ClockRequest?

    init(_ format: Format) {
        self.format = format
        switch format {
        case .json:
            name = "foundation-json"
            label = "JSONEncoder/JSONDecoder, bytes as the body"
        case .propertyList:
            name = "foundation-plist"
            label = "PropertyListEncoder (binary)/PropertyListDecoder"
        }
    }

    func start() throws { request = ClockRequest.sample(events: nil) }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let request else { throw BenchmarkFailure("measure before start") }
        var failure: (any Error)?
        let jsonEncoder = JSONEncoder()
        let jsonDecoder = JSONDecoder()
        let plistEncoder = PropertyListEncoder()
        plistEncoder.outputFormat = .binary
        let plistDecoder = PropertyListDecoder()
        let format = self.format
        measureEach(iterations: iterations, warmUp: warmUp, per: 16, into: &samples) {
            for _ in 0..<16 {
                do {
                    let data = switch format {
                    case .json: try jsonEncoder.encode(request)
                    case .propertyList: try plistEncoder.encode(request)
                    }
                    let message = Message(id: 3, body: Array(data))
                    let body = Data(message.body)
                    let back = switch format {
                    case .json: try jsonDecoder.decode(ClockRequest.self, from: body)
                    case .propertyList: try plistDecoder.decode(ClockRequest.self, from: body)
                    }
                    if !back.matches(request) { failure = BenchmarkFailure("the coded request came back different") }
                } catch {
                    failure = error
                }
            }
        }
        if let failure { throw failure }
    }

    func stop() { request = nil }
}
