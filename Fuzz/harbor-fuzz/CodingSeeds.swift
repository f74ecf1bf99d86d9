// Harbor fuzzing — the coding target's typed values and its seeds, written by HarborCoding's encoder.
import HarborCoding
@testable import HarborPorts
import HarborSystem

/// Every Codable shape: scalars at their limits, optionals, nested
/// structs, arrays, a dictionary, enums with and without associated values.
struct Sample: Codable, Equatable {
    enum Kind: String, Codable { case a, bb, ccc }
    enum Shape: Codable, Equatable { case none, point(x: Int16, y: Int16), label(String), nested([Shape]) }
    var id: UInt64
    var small: Int8
    var name: String
    var kind: Kind
    var shape: Shape
    var list: [Int32]
    var map: [String: Bool]
    var bytes: [UInt8]
    var maybe: FloatBits?
    var inner: [Sample]?
}

/// A Float compared by its bits, so that a NaN that came back is equal.
struct FloatBits: Codable, Equatable {
    var value: Float
    init(_ value: Float) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Float.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
    static func == (left: FloatBits, right: FloatBits) -> Bool { left.value.bitPattern == right.value.bitPattern }
}

/// A value with every kind of right and a region as fields.
struct Fielded: Codable {
    var send: SendRight
    var once: SendOnceRightCarrier?
    var receive: [ReceiveRightCarrier]
    var region: MemoryRegion?
    var note: String
}

enum CodingSeeds {
    static func make() -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        func add(_ header: [UInt8], _ message: consuming Message) {
            seeds.append(header + message.body)
        }
        let leaf = Sample(id: 1, small: -1, name: "", kind: .a, shape: .none, list: [], map: [:], bytes: [],
                          maybe: nil, inner: nil)
        let full = Sample(id: .max, small: .min, name: "naïve ⚓", kind: .ccc,
                          shape: .nested([.point(x: -1, y: .max), .label("l"), .none]),
                          list: [0, -1, .max, .min], map: ["t": true, "f": false], bytes: [0, 0xFF, 7],
                          maybe: FloatBits(-.infinity), inner: [leaf, leaf])
        for sample in [leaf, full] {
            if let message = try? MessageEncoder().encode(sample, id: 1) { add([0, 0, 0], message) }
        }
        if let message = try? MessageEncoder().encode(["k": [1, nil, -3] as [Int64?], "": []], id: 1) {
            add([0, 0, 0], message)
        }
        // Rights in the order the target attaches them: send, send-once, receive, receive.
        let port = ReceiveRight()
        let fielded = Fielded(send: port.makeSendRight(), once: SendOnceRightCarrier(port.makeSendOnceRight()),
                              receive: [ReceiveRightCarrier(ReceiveRight()), ReceiveRightCarrier(ReceiveRight())],
                              region: try? [UInt8](repeating: 1, count: 100).withUnsafeBytes { try MemoryRegion(copying: $0) },
                              note: "fielded")
        if let message = try? MessageEncoder().encode(fielded, id: 1) {
            add([4, 0b1010_0100, 2], message)
        }
        let bare = Fielded(send: port.makeSendRight(), once: nil, receive: [], region: nil, note: "")
        if let message = try? MessageEncoder().encode(bare, id: 1) { add([1, 0, 0], message) }
        while port.tryReceive() != nil {}
        return seeds
    }
}
