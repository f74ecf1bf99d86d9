// Harbor — the Encoder a value encodes itself into, and its single-value container.
import HarborPorts

/// Encodes one value into an ``EncodedNode``, a tree written afterwards:
/// the way a value is encoded when ``BodyStream`` cannot write it as it
/// goes; also its own single-value container (a value that asks for one
/// writes ``node`` directly).
final class BodyEncoder: Encoder, SingleValueEncodingContainer, MessageBodyEncoding, CodingPathLink {
    let state: EncodingState
    /// The encoder of the value this one's value is in, and its key there:
    /// the coding path, made only when asked for (an error, a value that
    /// reads it), not an array per field.
    /// Weak: a parent holds what its children write (a `superEncoder`'s
    /// child sits in the parent's container as `.deferred`), so a strong
    /// reference back would be a cycle, and every encoder of a subclass
    /// leaked (LeakSanitizer). Only the coding path reads it.
    private weak var parent: BodyEncoder?
    private let key: (any CodingKey)?
    /// How many keys deep the value is.
    let depth: Int
    /// What the value wrote; nil until it writes anything.
    @exclusivity(unchecked) var node: EncodedNode?

    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    var pathKey: (any CodingKey)? { key }
    var pathParent: BodyEncoder? { parent }

    init(state: EncodingState) {
        self.state = state
        parent = nil
        key = nil
        depth = 0
    }

    /// Another encoder at the same place (a single-value container's value).
    init(sibling: BodyEncoder) {
        state = sibling.state
        parent = sibling.parent
        key = sibling.key
        depth = sibling.depth
    }

    /// The encoder of the value at `key` in this one's.
    init(parent: BodyEncoder, key: any CodingKey) {
        state = parent.state
        self.parent = parent
        self.key = key
        depth = parent.depth + 1
    }

    /// The value written, an empty keyed container if it wrote nothing.
    var result: EncodedNode { node ?? .keyed(EncodedKeyed()) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let storage: EncodedKeyed
        if case .keyed(let existing) = node {
            storage = existing
        } else {
            storage = EncodedKeyed()
            node = .keyed(storage)
        }
        return KeyedEncodingContainer(KeyedBodyEncodingContainer<Key>(encoder: self, storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let storage: EncodedArray
        if case .array(let existing) = node {
            storage = existing
        } else {
            storage = EncodedArray()
            node = .array(storage)
        }
        return UnkeyedBodyEncodingContainer(encoder: self, storage: storage)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    func encodeNil() { node = .null }
    func encode(_ value: Bool) { node = .bool(value) }
    func encode(_ value: String) { node = .string(value) }
    func encode(_ value: Double) { node = .double(value) }
    func encode(_ value: Float) { node = .float(value) }
    func encode(_ value: Int) { node = .signed(Int64(value)) }
    func encode(_ value: Int8) { node = .signed(Int64(value)) }
    func encode(_ value: Int16) { node = .signed(Int64(value)) }
    func encode(_ value: Int32) { node = .signed(Int64(value)) }
    func encode(_ value: Int64) { node = .signed(value) }
    func encode(_ value: UInt) { node = .unsigned(UInt64(value)) }
    func encode(_ value: UInt8) { node = .unsigned(UInt64(value)) }
    func encode(_ value: UInt16) { node = .unsigned(UInt64(value)) }
    func encode(_ value: UInt32) { node = .unsigned(UInt64(value)) }
    func encode(_ value: UInt64) { node = .unsigned(value) }
    func encode<T: Encodable>(_ value: T) throws { node = try box(value) }

    // MARK: Nested values

    /// The node of a value whose type the format has a tag for, without
    /// an encoder of its own (an array's elements arrive here generically);
    /// nil for any other type. A byte array is a byte string.
    @inline(__always)
    static func primitive<T: Encodable>(_ value: T) -> EncodedNode? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .signed(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == [UInt8].self { return .bytes(unsafeBitCast(value, to: [UInt8].self)) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
        if T.self == Int64.self { return .signed(unsafeBitCast(value, to: Int64.self)) }
        if T.self == UInt64.self { return .unsigned(unsafeBitCast(value, to: UInt64.self)) }
        return nil
    }

    /// Encodes `value` as the top-level value.
    static func encode<T: Encodable>(_ value: T, state: EncodingState) throws -> EncodedNode {
        if let node = primitive(value) { return node }
        let root = BodyEncoder(state: state)
        try value.encode(to: root)
        return root.result
    }

    /// Encodes `value`, this encoder's own value (the top level, or a
    /// single-value container's), into a node.
    func box<T: Encodable>(_ value: T) throws -> EncodedNode {
        if let node = Self.primitive(value) { return node }
        let sibling = BodyEncoder(sibling: self)
        try value.encode(to: sibling)
        return sibling.result
    }

    /// Encodes `value`, at `key` in this encoder's value, into a node of its own.
    func box<T: Encodable>(_ value: T, at key: any CodingKey) throws -> EncodedNode {
        if let node = Self.primitive(value) { return node }
        guard depth < MessageCodingFormat.maximumDepth else {
            throw MessageCodingError(.limitExceeded, "values nested more than \(MessageCodingFormat.maximumDepth) deep",
                                     codingPath: codingPath + [key])
        }
        let child = BodyEncoder(parent: self, key: key)
        try value.encode(to: child)
        return child.result
    }

    /// Writes a carried right's, region's or file's index (`kind` its tag) as the value.
    func writeCarried(_ kind: MessageCodingFormat.Tag, index: Int) {
        node = switch kind {
        case .region: .region(index)
        case .file: .file(index)
        default: .right(kind, index)
        }
    }
}
