// Harbor — a keyed container of the body encoder.
import HarborPorts

/// Writes a keyed container's pairs into an ``EncodedKeyed``.
struct KeyedBodyEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BodyEncoder
    let storage: EncodedKeyed

    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil(forKey key: Key) { storage.set(key.stringValue, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) { storage.set(key.stringValue, .bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) { storage.set(key.stringValue, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) { storage.set(key.stringValue, .double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) { storage.set(key.stringValue, .float(value)) }
    mutating func encode(_ value: Int, forKey key: Key) { storage.set(key.stringValue, .signed(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) { storage.set(key.stringValue, .signed(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) { storage.set(key.stringValue, .signed(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) { storage.set(key.stringValue, .signed(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) { storage.set(key.stringValue, .signed(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) { storage.set(key.stringValue, .unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) { storage.set(key.stringValue, .unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) { storage.set(key.stringValue, .unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) { storage.set(key.stringValue, .unsigned(UInt64(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) { storage.set(key.stringValue, .unsigned(value)) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        storage.set(key.stringValue, try encoder.box(value, at: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = EncodedKeyed()
        storage.set(key.stringValue, .keyed(nested))
        let child = BodyEncoder(parent: encoder, key: key)
        return KeyedEncodingContainer(KeyedBodyEncodingContainer<NestedKey>(encoder: child, storage: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = EncodedArray()
        storage.set(key.stringValue, .array(nested))
        let child = BodyEncoder(parent: encoder, key: key)
        return UnkeyedBodyEncodingContainer(encoder: child, storage: nested)
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: CodingKeyName.super) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        let child = BodyEncoder(parent: encoder, key: key)
        storage.set(key.stringValue, .deferred(child))
        return child
    }
}
