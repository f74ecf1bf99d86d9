// Harbor — the codable-message benchmark's floor: the request's body written and read by hand.
import Harbor

/// Writes the request's fields into a body byte by byte (fixed-width
/// numbers, one-byte lengths) and reads them back with every length
/// checked, as a careful hand-written service does today; the send right,
/// if any, attached and taken by index.
final class HandCodedRequest: BenchmarkVariant {
    let name: String
    let label: String
    let isFloor: Bool
    private let withRight: Bool
    private var request: ClockRequest?
    private var port: ReceiveRight?

    init(withRight: Bool) {
        self.withRight = withRight
        name = withRight ? "hand+right" : "hand"
        label = withRight ? "body by hand, the send right attached and taken by index" : "body by hand, lengths checked"
        isFloor = !withRight
    }

    var isRaw: Bool { true }

    func start() throws {
        let port = ReceiveRight()
        request = ClockRequest.sample(events: withRight ? port.makeSendRight() : nil)
        self.port = consume port
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let request else { throw BenchmarkFailure("measure before start") }
        var failed = false
        measureEach(iterations: iterations, warmUp: warmUp, per: 16, into: &samples) {
            for _ in 0..<16 {
                var message = Self.encode(request)
                guard let back = Self.decode(&message), back.matches(request) else {
                    failed = true
                    return
                }
            }
        }
        if failed { throw BenchmarkFailure("the hand-coded request did not come back") }
    }

    func stop() {
        request = nil
        port = nil
    }

    static func encode(_ request: ClockRequest) -> Message {
        var body: [UInt8] = []
        body.reserveCapacity(64)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { body.append(contentsOf: $0) }
        }
        func append(_ string: String) {
            let utf8 = Array(string.utf8)
            body.append(UInt8(utf8.count))
            body.append(contentsOf: utf8)
        }
        append(request.sequence)
        append(request.intervalMilliseconds)
        body.append(request.wantsAck ? 1 : 0)
        append(request.method)
        body.append(UInt8(request.topics.count))
        for topic in request.topics { append(topic) }
        body.append(request.events == nil ? 0 : 1)
        var message = Message(id: 3, body: body)
        if let events = request.events { message.attach(events) }
        return message
    }

    static func decode(_ message: inout Message) -> ClockRequest? {
        let body = message.body
        var offset = 0
        func integer<T: FixedWidthInteger>(_ type: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard body.count - offset >= size else { return nil }
            var value: T = 0
            for index in 0..<size { value |= T(body[offset + index]) << (8 * index) }
            offset += size
            return value
        }
        func string() -> String? {
            guard offset < body.count else { return nil }
            let length = Int(body[offset])
            offset += 1
            guard body.count - offset >= length else { return nil }
            defer { offset += length }
            return String(validating: body[offset..<(offset + length)], as: UTF8.self)
        }
        guard let sequence = integer(UInt64.self), let interval = integer(Int32.self),
              let flag = integer(UInt8.self), let method = string(), let count = integer(UInt8.self) else { return nil }
        var topics: [String] = []
        for _ in 0..<count {
            guard let topic = string() else { return nil }
            topics.append(topic)
        }
        guard let hasRight = integer(UInt8.self), offset == body.count else { return nil }
        var events: SendRight?
        if hasRight == 1 {
            guard let right = try? message.takeSendRight(at: 0) else { return nil }
            events = right
        }
        return ClockRequest(method: method, sequence: sequence, intervalMilliseconds: interval, wantsAck: flag == 1,
                            topics: topics, events: events)
    }
}
