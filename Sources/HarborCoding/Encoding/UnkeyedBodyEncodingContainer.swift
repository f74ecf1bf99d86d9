// Harbor — an unkeyed container of the body encoder.
import HarborPorts

/// Appends an unkeyed container's values to an ``EncodedArray``.
struct UnkeyedBodyEncodingContainer: UnkeyedEncodingContainer {
    let encoder: BodyEncoder
    let storage: EncodedArray

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { storage.items.count }

    private var nextKey: any CodingKey { CodingKeyName(index: storage.items.count) }

    mutating func encodeNil() { storage.items.append(.null) }
    mutating func encode(_ value: Bool) { storage.items.append(.bool(value)) }
    mutating func encode(_ value: String) { storage.items.append(.string(value)) }
    mutating func encode(_ value: Double) { storage.items.append(.double(value)) }
    mutating func encode(_ value: Float) { storage.items.append(.float(value)) }
    mutating func encode(_ value: Int) { storage.items.append(.signed(Int64(value))) }
    mutating func encode(_ value: Int8) { storage.items.append(.signed(Int64(value))) }
    mutating func encode(_ value: Int16) { storage.items.append(.signed(Int64(value))) }
    mutating func encode(_ value: Int32) { storage.items.append(.signed(Int64(value))) }
    mutating func encode(_ value: Int64) { storage.items.append(.signed(value)) }
    mutating func encode(_ value: UInt) { storage.items.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8) { storage.items.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16) { storage.items.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32) { storage.items.append(.unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64) { storage.items.append(.unsigned(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        storage.items.append(try encoder.box(value, at: nextKey))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedKeyed()
        let child = BodyEncoder(parent: encoder, key: nextKey)
        storage.items.append(.keyed(nested))
        return KeyedEncodingContainer(KeyedBodyEncodingContainer<NestedKey>(encoder: child, storage: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        let child = BodyEncoder(parent: encoder, key: nextKey)
        storage.items.append(.array(nested))
        return UnkeyedBodyEncodingContainer(encoder: child, storage: nested)
    }

    mutating func superEncoder() -> any Encoder {
        let child = BodyEncoder(parent: encoder, key: nextKey)
        storage.items.append(.deferred(child))
        return child
    }
}
