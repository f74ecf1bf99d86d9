// Harbor — the Decoder a value decodes itself from, and its single-value container.
import HarborPorts

/// Decodes the value at one node of a parsed body; also its own
/// single-value container.
final class BodyDecoder: Decoder, SingleValueDecodingContainer, CodingPathLink {
    let state: DecodingState
    let node: Int
    /// The decoder of the value this one's value is in, and its key there:
    /// the coding path, made only when asked for (an error), not an array
    /// per field.
    private let parent: BodyDecoder?
    private let key: (any CodingKey)?

    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    var pathKey: (any CodingKey)? { key }
    var pathParent: BodyDecoder? { parent }

    /// The top-level value's decoder.
    init(state: DecodingState) {
        self.state = state
        node = 0
        parent = nil
        key = nil
    }

    /// The decoder of the value at `node`, which is at `key` in `parent`'s
    /// value (or at the same place as `parent`'s, without a key).
    init(_ parent: BodyDecoder, node: Int, key: (any CodingKey)?) {
        state = parent.state
        self.node = node
        if let key {
            self.parent = parent
            self.key = key
        } else {
            self.parent = parent.parent
            self.key = parent.key
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try state.expect(node, .keyed, path: codingPath)
        return KeyedDecodingContainer(KeyedBodyDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try state.expect(node, .array, path: codingPath)
        return UnkeyedBodyDecodingContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Single value

    func decodeNil() -> Bool { state.isNull(node) }
    func decode(_ type: Bool.Type) throws -> Bool { try state.bool(node, path: codingPath) }
    func decode(_ type: String.Type) throws -> String { try state.string(node, path: codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try state.double(node, path: codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try state.float(node, path: codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try state.integer(node, type, path: codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try state.integer(node, type, path: codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(node, type, path: codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(node, type, path: codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unbox(type, at: node, key: nil) }

    /// Decodes the value at `node`, at `key` in this decoder's value (or,
    /// without a key, this decoder's own value); a byte string straight
    /// into `[UInt8]`.
    func unbox<T: Decodable>(_ type: T.Type, at node: Int, key: (any CodingKey)?) throws -> T {
        // Types the format has a tag for, without a decoder of their own
        // (an array's elements arrive here generically).
        if T.self == String.self {
            return unsafeBitCast(try state.string(node, path: self.path(key)), to: T.self)
        }
        if T.self == Int.self {
            return unsafeBitCast(try state.integer(node, Int.self, path: self.path(key)), to: T.self)
        }
        if T.self == [UInt8].self, let bytes = state.bytes(node) { return unsafeBitCast(bytes, to: T.self) }
        if T.self == [String].self, let strings = state.strings(node) { return unsafeBitCast(strings, to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try state.bool(node, path: self.path(key)), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try state.double(node, path: self.path(key)), to: T.self) }
        // This decoder's own value (the top level, a single-value
        // container's) is decoded by this decoder: a new one would be the same.
        if key == nil, node == self.node { return try T(from: self) }
        return try T(from: BodyDecoder(self, node: node, key: key))
    }

    /// The coding path of the value at `key` in this decoder's value.
    private func path(_ key: (any CodingKey)?) -> [any CodingKey] {
        guard let key else { return codingPath }
        return codingPath + [key]
    }

    /// The body decoder behind `decoder`, or a typed error saying that
    /// `what` (a right, a region) can be decoded only from a message.
    static func of(_ decoder: any Decoder, decoding what: String) throws(MessageCodingError) -> BodyDecoder {
        guard let body = decoder as? BodyDecoder else {
            throw MessageCodingError(.typeMismatch,
                                     "\(what) can be decoded only by a MessageDecoder, from a message, not by \(type(of: decoder))",
                                     codingPath: decoder.codingPath)
        }
        return body
    }
}
