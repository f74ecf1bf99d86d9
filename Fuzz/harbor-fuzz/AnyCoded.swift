// Harbor fuzzing — a Codable value that takes whatever a coded body holds.
import HarborCoding
import HarborPorts

/// Any value of the format, found by asking the decoder for each kind in
/// turn: what a generic reader of a hostile body would do.
indirect enum AnyCoded: Codable, Equatable {
    case null
    case bool(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    /// A double's bits (so NaN equals itself).
    case double(UInt64)
    case string(String)
    case bytes([UInt8])
    case array([AnyCoded])
    case keyed([String], [AnyCoded])
    case sendRight
    case sendOnceRight
    case receiveRight
    case region(Int)

    struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null; return }
        if let value = try? single.decode(Bool.self) { self = .bool(value); return }
        if let value = try? single.decode(Int64.self) { self = .signed(value); return }
        if let value = try? single.decode(UInt64.self) { self = .unsigned(value); return }
        if let value = try? single.decode(Double.self) { self = .double(value.bitPattern); return }
        if let value = try? single.decode(String.self) { self = .string(value); return }
        if let value = try? single.decode([UInt8].self) { self = .bytes(value); return }
        if var array = try? decoder.unkeyedContainer() {
            var items: [AnyCoded] = []
            while !array.isAtEnd { items.append(try array.decode(AnyCoded.self)) }
            self = .array(items)
            return
        }
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            let keys = keyed.allKeys
            self = .keyed(keys.map(\.stringValue), try keys.map { try keyed.decode(AnyCoded.self, forKey: $0) })
            return
        }
        if (try? single.decode(SendRight.self)) != nil { self = .sendRight; return }
        if let carrier = try? single.decode(SendOnceRightCarrier.self) {
            _ = try carrier.take()
            self = .sendOnceRight
            return
        }
        if let carrier = try? single.decode(ReceiveRightCarrier.self) {
            _ = try carrier.take()
            self = .receiveRight
            return
        }
        if let region = try? single.decode(MemoryRegion.self) { self = .region(region.count); return }
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no kind fits"))
    }

    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .signed(let value): try single.encode(value)
        case .unsigned(let value): try single.encode(value)
        case .double(let bits): try single.encode(Double(bitPattern: bits))
        case .string(let value): try single.encode(value)
        case .bytes(let value): try single.encode(value)
        case .array(let items):
            var array = encoder.unkeyedContainer()
            for item in items { try array.encode(item) }
        case .keyed(let keys, let values):
            var keyed = encoder.container(keyedBy: Key.self)
            for (key, value) in zip(keys, values) { try keyed.encode(value, forKey: Key(stringValue: key)) }
        case .sendRight, .sendOnceRight, .receiveRight, .region:
            try single.encodeNil()  // never re-encoded: the round trip is checked only without them
        }
    }

    /// How many rights the value took out of its message.
    var rightCount: Int {
        switch self {
        case .sendRight, .sendOnceRight, .receiveRight: 1
        case .array(let items): items.reduce(0) { $0 + $1.rightCount }
        case .keyed(_, let values): values.reduce(0) { $0 + $1.rightCount }
        default: 0
        }
    }

    var hasRegion: Bool {
        switch self {
        case .region: true
        case .array(let items): items.contains { $0.hasRegion }
        case .keyed(_, let values): values.contains { $0.hasRegion }
        default: false
        }
    }
}
