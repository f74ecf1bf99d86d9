// Harbor — a keyed container of the streaming body encoder.
import HarborPorts

/// Writes a keyed container's pairs straight into the body
/// (``BodyStream``), while the container is open.
struct KeyedStreamEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: StreamEncoder
    /// The container in the stream; -1 if the stream failed when it was made.
    let id: Int

    var codingPath: [any CodingKey] { encoder.codingPath }

    private var state: EncodingState { encoder.state }

    /// Writes `key`, the value to follow; false if the stream failed.
    @inline(__always)
    private func begin(_ key: Key) -> Bool { state.stream.key(key.stringValue, in: id) }

    mutating func encodeNil(forKey key: Key) { if begin(key) { state.stream.writer.tag(.null) } }
    mutating func encode(_ value: Bool, forKey key: Key) { if begin(key) { state.stream.writer.bool(value) } }
    mutating func encode(_ value: String, forKey key: Key) { if begin(key) { state.stream.writer.string(value) } }
    mutating func encode(_ value: Double, forKey key: Key) { if begin(key) { state.stream.writer.double(value) } }
    mutating func encode(_ value: Float, forKey key: Key) { if begin(key) { state.stream.writer.float(value) } }
    mutating func encode(_ value: Int, forKey key: Key) { if begin(key) { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int8, forKey key: Key) { if begin(key) { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int16, forKey key: Key) { if begin(key) { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int32, forKey key: Key) { if begin(key) { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int64, forKey key: Key) { if begin(key) { state.stream.writer.signed(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) { if begin(key) { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt8, forKey key: Key) { if begin(key) { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt16, forKey key: Key) { if begin(key) { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt32, forKey key: Key) { if begin(key) { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt64, forKey key: Key) { if begin(key) { state.stream.writer.unsigned(value) } }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        guard begin(key) else { return }
        try encoder.encode(value, at: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = begin(key) ? state.stream.open(keyed: true) : nil
        return KeyedEncodingContainer(KeyedStreamEncodingContainer<NestedKey>(
            encoder: StreamEncoder(encoder, key: key), id: nested ?? -1))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = begin(key) ? state.stream.open(keyed: false) : nil
        return UnkeyedStreamEncodingContainer(encoder: StreamEncoder(encoder, key: key), id: nested ?? -1)
    }

    /// A super encoder's value may be written after the container went
    /// on: the stream fails, and the tree writes it.
    mutating func superEncoder() -> any Encoder { superEncoder(named: CodingKeyName.super) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key) }

    private func superEncoder(named key: any CodingKey) -> any Encoder {
        state.stream.fail()
        return StreamEncoder(encoder, key: key)
    }
}
