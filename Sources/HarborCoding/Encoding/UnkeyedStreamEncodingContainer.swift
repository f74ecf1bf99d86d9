// Harbor — an unkeyed container of the streaming body encoder.
import HarborPorts

/// Writes an unkeyed container's values straight into the body
/// (``BodyStream``), while the container is open.
struct UnkeyedStreamEncodingContainer: UnkeyedEncodingContainer {
    let encoder: StreamEncoder
    /// The container in the stream; -1 if the stream failed when it was made.
    let id: Int

    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { state.stream.count(of: id) }

    private var state: EncodingState { encoder.state }

    /// Counts the value to follow; false if the stream failed.
    @inline(__always)
    private func begin() -> Bool { state.stream.element(in: id) }

    mutating func encodeNil() { if begin() { state.stream.writer.tag(.null) } }
    mutating func encode(_ value: Bool) { if begin() { state.stream.writer.bool(value) } }
    mutating func encode(_ value: String) { if begin() { state.stream.writer.string(value) } }
    mutating func encode(_ value: Double) { if begin() { state.stream.writer.double(value) } }
    mutating func encode(_ value: Float) { if begin() { state.stream.writer.float(value) } }
    mutating func encode(_ value: Int) { if begin() { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int8) { if begin() { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int16) { if begin() { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int32) { if begin() { state.stream.writer.signed(Int64(value)) } }
    mutating func encode(_ value: Int64) { if begin() { state.stream.writer.signed(value) } }
    mutating func encode(_ value: UInt) { if begin() { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt8) { if begin() { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt16) { if begin() { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt32) { if begin() { state.stream.writer.unsigned(UInt64(value)) } }
    mutating func encode(_ value: UInt64) { if begin() { state.stream.writer.unsigned(value) } }

    mutating func encode<T: Encodable>(_ value: T) throws {
        guard begin() else { return }
        try encoder.encode(value, at: CodingKeyName(index: count - 1))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = StreamEncoder(encoder, key: CodingKeyName(index: count))
        let nested = begin() ? state.stream.open(keyed: true) : nil
        return KeyedEncodingContainer(KeyedStreamEncodingContainer<NestedKey>(encoder: child, id: nested ?? -1))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = StreamEncoder(encoder, key: CodingKeyName(index: count))
        let nested = begin() ? state.stream.open(keyed: false) : nil
        return UnkeyedStreamEncodingContainer(encoder: child, id: nested ?? -1)
    }

    /// A super encoder's value may be written after the container went
    /// on: the stream fails, and the tree writes it.
    mutating func superEncoder() -> any Encoder {
        state.stream.fail()
        return StreamEncoder(encoder, key: CodingKeyName(index: count))
    }
}
