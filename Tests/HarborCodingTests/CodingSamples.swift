// Harbor — the values the coding tests send: every shape Codable has.
import HarborCoding
import HarborPorts

/// A request as a service would define it: scalars, optionals, nested
/// structs, arrays, a dictionary, an enum with associated values, bytes.
struct Order: Codable, Equatable {
    enum Priority: String, Codable, Equatable { case low, normal, urgent }
    enum Delivery: Codable, Equatable {
        case pickup
        case courier(name: String, minutes: Int)
        case post(Address)
    }
    struct Address: Codable, Equatable {
        var street: String
        var number: UInt16
        var note: String?
    }
    struct Line: Codable, Equatable {
        var item: String
        var count: Int32
        var price: Double
    }

    var id: UInt64
    var customer: String
    var priority: Priority
    var lines: [Line]
    var delivery: Delivery
    var fallback: Delivery?
    var tags: Set<String>
    var quantities: [String: Int]
    var signature: [UInt8]
    var comment: String?
    var nested: [[Int8?]]
    var ratio: Float
}

extension Order {
    static let sample = Order(
        id: .max, customer: "Zoë 🚢 Ünïcode", priority: .urgent,
        lines: [Line(item: "rope", count: -3, price: 2.5), Line(item: "anchor", count: .max, price: -.infinity)],
        delivery: .courier(name: "Ana", minutes: -45), fallback: .post(Address(street: "Quay", number: 7, note: nil)),
        tags: ["a", "b", "c"], quantities: ["x": .min, "y": 0, "z": .max], signature: Array(0...255),
        comment: nil, nested: [[1, nil, -128], [], [nil]], ratio: 0.125)
}

/// A class hierarchy that codes its superclass through `superEncoder()`.
class Vessel: Codable {
    var name: String
    init(name: String) { self.name = name }
}

final class Tanker: Vessel, @unchecked Sendable {
    // @unchecked: a test value, made and read on one thread.
    var capacity: Int
    init(name: String, capacity: Int) {
        self.capacity = capacity
        super.init(name: name)
    }
    private enum CodingKeys: String, CodingKey { case capacity }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        capacity = try container.decode(Int.self, forKey: .capacity)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(capacity, forKey: .capacity)
        try super.encode(to: container.superEncoder())
    }
}

/// A request with every kind of right and a region as fields.
struct Handover: Codable {
    var note: String
    var reportTo: SendRight
    var inbox: ReceiveRightCarrier
    var answer: SendOnceRightCarrier
    var payload: MemoryRegion
    var extra: [SendRight]
}

/// A chain of keyed containers, one a link, nested as deep as asked.
final class Link: Codable, @unchecked Sendable {
    // @unchecked: a test value, made and read on one thread.
    let next: Link?
    init(next: Link?) { self.next = next }

    static func chain(_ count: Int) -> Link {
        var link = Link(next: nil)
        for _ in 1..<count { link = Link(next: link) }
        return link
    }

    var length: Int { 1 + (next?.length ?? 0) }
}
