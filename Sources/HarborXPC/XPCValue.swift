// HarborXPC — any value a message body can hold, without its Swift type: what tools read and write.

/// A value of HarborCoding's format (`Docs/Coding.md`) taken without its
/// Swift type, as a generic tool must: JSON's shapes plus byte strings.
///
/// The format is self-describing (each value starts with a tag saying its
/// kind), so any body decodes as an `XPCValue`, and an `XPCValue` encodes
/// as the body the typed value would have been:
///
/// ```swift
/// let reply = try session.sendSync(XPCMethodCall(method: "echo", parameters: XPCValue.object(["n": .int(7)])))
/// let value = try reply.decode(as: XPCValue.self)      // .object(["n": .int(7), …])
/// ```
///
/// Decoding asks the decoder for each kind in turn, so it works with any
/// `Decoder` (`JSONDecoder` too). Integers decode as ``int(_:)`` (as
/// ``uint(_:)`` only above `Int64.max`), since the decoder does not say
/// whether the writer's type was signed. A body holding a right, a region
/// or a file descriptor does not decode as an `XPCValue`
/// (`DecodingError.dataCorrupted`): those cannot be shown as values.
///
/// **Thread safety:** a value; any thread.
public indirect enum XPCValue: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Nil (`0x00`); JSON's `null`.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer that fits `Int64`.
    case int(Int64)
    /// An integer above `Int64.max`.
    case uint(UInt64)
    /// A floating-point number.
    case double(Double)
    /// A string.
    case string(String)
    /// A byte string (a `[UInt8]` field); JSON shows it as an array of numbers.
    case bytes([UInt8])
    /// An array (an unkeyed container).
    case array([XPCValue])
    /// A keyed container: a struct, a dictionary with string keys, an enum case.
    case object([String: XPCValue])

    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes whatever value `decoder` holds.
    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null; return }
        if let value = try? single.decode(Bool.self) { self = .bool(value); return }
        if let value = try? single.decode(Int64.self) { self = .int(value); return }
        if let value = try? single.decode(UInt64.self) { self = .uint(value); return }
        if let value = try? single.decode(Double.self) { self = .double(value); return }
        if let value = try? single.decode(String.self) { self = .string(value); return }
        if var array = try? decoder.unkeyedContainer() {
            var items: [XPCValue] = []
            while !array.isAtEnd { items.append(try array.decode(XPCValue.self)) }
            self = .array(items)
            return
        }
        if let value = try? single.decode([UInt8].self) { self = .bytes(value); return }
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var members: [String: XPCValue] = [:]
            for key in keyed.allKeys { members[key.stringValue] = try keyed.decode(XPCValue.self, forKey: key) }
            self = .object(members)
            return
        }
        throw DecodingError.dataCorrupted(.init(
            codingPath: decoder.codingPath,
            debugDescription: "a right, a region or a file descriptor: not a value a tool can show"))
    }

    /// Encodes the value as the typed value it stands for would be
    /// (an object's members in key order).
    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .int(let value): try single.encode(value)
        case .uint(let value): try single.encode(value)
        case .double(let value): try single.encode(value)
        case .string(let value): try single.encode(value)
        case .bytes(let value): try single.encode(value)
        case .array(let items):
            var array = encoder.unkeyedContainer()
            for item in items { try array.encode(item) }
        case .object(let members):
            var keyed = encoder.container(keyedBy: Key.self)
            for key in members.keys.sorted() { try keyed.encode(members[key], forKey: Key(stringValue: key)) }
        }
    }

    /// The value made to fit `type` where JSON cannot say which was meant:
    /// an integer where a `double` is wanted becomes one, an array of
    /// numbers 0–255 where `bytes` are wanted becomes a byte string, and
    /// arrays and objects are fitted member by member. Anything else is
    /// left as it is (the service's decoding judges it).
    public func fitted(to type: XPCType) -> XPCValue {
        switch (self, type) {
        case (_, .optional(let wrapped)): return self == .null ? self : fitted(to: wrapped)
        case (.int(let value), .double): return .double(Double(value))
        case (.uint(let value), .double): return .double(Double(value))
        case (.array(let items), .bytes):
            var bytes: [UInt8] = []
            for item in items {
                guard case .int(let value) = item, let byte = UInt8(exactly: value) else { return self }
                bytes.append(byte)
            }
            return .bytes(bytes)
        case (.array(let items), .array(let element)): return .array(items.map { $0.fitted(to: element) })
        case (.object(let members), .object(let fields)):
            return .object(Dictionary(uniqueKeysWithValues: members.map { key, value in
                (key, fields[key].map { value.fitted(to: $0) } ?? value)
            }))
        default: return self
        }
    }

    /// The value's shape, as a sample value describes its type: an
    /// ``XPCType`` (nil is ``XPCType/any``, an empty array's element too).
    public var shape: XPCType {
        switch self {
        case .null: .any
        case .bool: .bool
        case .int, .uint: .int
        case .double: .double
        case .string: .string
        case .bytes: .bytes
        case .array(let items): .array(items.first?.shape ?? .any)
        case .object(let members): .object(members.mapValues(\.shape))
        }
    }

    /// A short, JSON-like text for logs (not escaped; tools print JSON).
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .uint(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .bytes(let value): "\(value)"
        case .array(let items): "[" + items.map(\.description).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.keys.sorted().map { "\"\($0)\":\((members[$0] ?? .null).description)" }.joined(separator: ",") + "}"
        }
    }
}
