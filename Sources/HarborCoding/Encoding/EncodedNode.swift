// Harbor — a value as the encoder holds it before writing the body.
import HarborPorts

/// One encoded value. Containers are references, so a container handed out
/// by `container(keyedBy:)` can still be written after its parent went on
/// (Codable allows writing a nested container later).
enum EncodedNode {
    case null
    case bool(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case array(EncodedArray)
    case keyed(EncodedKeyed)
    /// A carried right: its tag (send, send-once, receive) and its index.
    case right(MessageCodingFormat.Tag, Int)
    /// An out-of-line region's index.
    case region(Int)
    /// A carried file's index.
    case file(Int)
    /// What an encoder handed out by `superEncoder()` writes, maybe later.
    case deferred(BodyEncoder)
}

/// An unkeyed container's values, in order.
final class EncodedArray {
    @exclusivity(unchecked) var items: [EncodedNode] = []
}

/// A keyed container's pairs, in the order first written. A key written
/// again replaces its value (as JSONEncoder does), so the body never holds
/// a key twice, which the decoder refuses.
final class EncodedKeyed {
    @exclusivity(unchecked) private(set) var entries: [(key: String, value: EncodedNode)] = []
    /// Built once the container is large enough that a linear search costs more.
    private var positions: [String: Int]?

    private static let linearLimit = 16

    func set(_ key: String, _ value: EncodedNode) {
        if let position = position(of: key) {
            entries[position].value = value
            return
        }
        if entries.isEmpty { entries.reserveCapacity(8) }
        entries.append((key, value))
        if positions != nil {
            positions![key] = entries.count - 1
        } else if entries.count > Self.linearLimit {
            positions = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
        }
    }

    private func position(of key: String) -> Int? {
        if let positions { return positions[key] }
        return entries.firstIndex { $0.key == key }
    }
}
