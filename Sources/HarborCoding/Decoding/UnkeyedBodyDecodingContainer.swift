// Harbor — an unkeyed container of the body decoder.
import HarborPorts

/// Walks an array's values in order; a failed decode does not move on.
struct UnkeyedBodyDecodingContainer: UnkeyedDecodingContainer {
    private let decoder: BodyDecoder
    private var cursor: Int
    private(set) var currentIndex = 0
    let count: Int?

    init(decoder: BodyDecoder) {
        self.decoder = decoder
        cursor = decoder.node + 1
        count = Int(decoder.state.tape[decoder.node].count)
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var isAtEnd: Bool { currentIndex >= count! }

    private var state: DecodingState { decoder.state }
    private var key: CodingKeyName { CodingKeyName(index: currentIndex) }
    private var path: [any CodingKey] { codingPath + [key] }

    /// The next value's node, or a typed error at the end.
    private func next(_ type: Any.Type) throws(MessageCodingError) -> Int {
        guard !isAtEnd else {
            throw MessageCodingError(.valueNotFound, "expected \(type), but the array has only \(count!) values",
                                     codingPath: path)
        }
        return cursor
    }

    private mutating func advance() {
        cursor = Int(state.tape[cursor].end)
        currentIndex += 1
    }

    mutating func decodeNil() throws -> Bool {
        guard try state.isNull(next(Never.self)) else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let value = try state.bool(next(type), path: path)
        advance()
        return value
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let value = try state.string(next(type), path: path)
        advance()
        return value
    }

    mutating func decode(_ type: Double.Type) throws -> Double {
        let value = try state.double(next(type), path: path)
        advance()
        return value
    }

    mutating func decode(_ type: Float.Type) throws -> Float {
        let value = try state.float(next(type), path: path)
        advance()
        return value
    }

    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    @inline(__always)
    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let value = try state.integer(next(type), type, path: path)
        advance()
        return value
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let value = try decoder.unbox(type, at: next(type), key: key)
        advance()
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try BodyDecoder(decoder, node: next(KeyedDecodingContainer<NestedKey>.self), key: key)
            .container(keyedBy: type)
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try BodyDecoder(decoder, node: next((any UnkeyedDecodingContainer).self), key: key)
            .unkeyedContainer()
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let superDecoder = BodyDecoder(decoder, node: try next((any Decoder).self), key: key)
        advance()
        return superDecoder
    }
}
