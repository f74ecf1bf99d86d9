// Harbor — a keyed container of the body decoder.
import HarborPorts

/// Looks a keyed container's values up by key: a linear search over a few
/// keys, a dictionary built once over many.
struct KeyedBodyDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    private let decoder: BodyDecoder
    /// The container's first value's node and the node after its last.
    private let first: Int
    private let end: Int
    /// Each key's value, for a large container; nil for a small one, which
    /// is searched in place (no allocation).
    private let positions: [String: Int]?

    private static var linearLimit: Int { 16 }

    init(decoder: BodyDecoder) {
        self.decoder = decoder
        let tape = decoder.state.tape
        first = decoder.node + 1
        end = Int(tape[decoder.node].end)
        if tape[decoder.node].count > Self.linearLimit {
            var positions: [String: Int] = [:]
            var child = first
            while child < end {
                positions[decoder.state.keyString(child)] = child
                child = Int(tape[child].end)
            }
            self.positions = positions
        } else {
            positions = nil
        }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }

    /// The value nodes, in body order.
    private var children: [Int] {
        var children: [Int] = []
        var child = first
        while child < end {
            children.append(child)
            child = Int(state.tape[child].end)
        }
        return children
    }

    var allKeys: [Key] { children.compactMap { Key(stringValue: state.keyString($0)) } }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    /// The value node of `key`: from where the last look-up in this
    /// container ended, to the end and round again.
    private func lookup(_ key: Key) -> Int? {
        if let positions { return positions[key.stringValue] }
        let name = key.stringValue
        let state = self.state
        let tape = state.tape
        let start = state.hintContainer == decoder.node ? state.hint : first
        var child = start
        var wrapped = false
        while true {
            if child >= end {
                if wrapped || start == first { return nil }
                wrapped = true
                child = first
            }
            if wrapped && child >= start { return nil }
            if state.key(of: child, is: name) {
                state.hintContainer = decoder.node
                state.hint = Int(tape[child].end)
                return child
            }
            child = Int(tape[child].end)
        }
    }

    private func node(_ key: Key) throws(MessageCodingError) -> Int {
        guard let node = lookup(key) else {
            throw MessageCodingError(.keyNotFound, "no key \"\(key.stringValue)\"", codingPath: codingPath)
        }
        return node
    }

    private var state: DecodingState { decoder.state }

    func decodeNil(forKey key: Key) throws -> Bool { state.isNull(try node(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try state.bool(node(key), path: codingPath + [key]) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try state.string(node(key), path: codingPath + [key]) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try state.double(node(key), path: codingPath + [key]) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try state.float(node(key), path: codingPath + [key]) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

    @inline(__always)
    private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
        try state.integer(node(key), type, path: codingPath + [key])
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.unbox(type, at: node(key), key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try BodyDecoder(decoder, node: node(key), key: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try BodyDecoder(decoder, node: node(key), key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        guard let node = children.first(where: { state.key(of: $0, is: CodingKeyName.super.stringValue) }) else {
            throw MessageCodingError(.keyNotFound, "no key \"super\"", codingPath: codingPath)
        }
        return BodyDecoder(decoder, node: node, key: CodingKeyName.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        BodyDecoder(decoder, node: try node(key), key: key)
    }
}
