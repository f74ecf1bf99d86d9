// Harbor — the Encoder a value encodes itself into when the body is streamed.
import HarborPorts

/// Encodes one value straight into the body (``BodyStream``), at the place
/// that was the body's end when the encoder was made; also its own
/// single-value container. What the stream cannot write fails it, and
/// ``MessageEncoder`` encodes the value again with ``BodyEncoder``.
final class StreamEncoder: Encoder, SingleValueEncodingContainer, MessageBodyEncoding, CodingPathLink {
    let state: EncodingState
    /// The encoder of the value this one's value is in, and its key there:
    /// the coding path, made only when asked for.
    private let parent: StreamEncoder?
    private let key: (any CodingKey)?
    /// How many keys deep the value is.
    let depth: Int
    /// Where the value goes: the body's length and how many containers
    /// were open when the encoder was made.
    private let offset: Int
    private let height: Int
    /// The container the value opened, or -1, and whether it is keyed.
    private var container = -1
    private var keyed = false
    /// Whether the value wrote anything.
    private(set) var wrote = false

    var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

    var pathKey: (any CodingKey)? { key }
    var pathParent: StreamEncoder? { parent }

    /// The encoder of a top-level value, at the end of the body.
    init(state: EncodingState) {
        self.state = state
        parent = nil
        key = nil
        depth = 0
        offset = state.stream.writer.bytes.count
        height = state.stream.height
    }

    /// The encoder of the value at `key` in `parent`'s, or (no key) of
    /// `parent`'s own value; its place is the end of the body.
    init(_ parent: StreamEncoder, key: (any CodingKey)?) {
        state = parent.state
        if let key {
            self.parent = parent
            self.key = key
            depth = parent.depth + 1
        } else {
            self.parent = parent.parent
            self.key = parent.key
            depth = parent.depth
        }
        offset = state.stream.writer.bytes.count
        height = state.stream.height
    }

    /// Whether the value may be written now: it wrote nothing yet, and
    /// nothing was written since the encoder was made. Fails the stream if not.
    @inline(__always)
    private func claim() -> Bool {
        guard !wrote else {
            state.stream.fail()
            return false
        }
        wrote = true
        return state.stream.claim(offset: offset, height: height)
    }

    /// The container the value writes into: the one it opened, or a new one.
    private func containerID(keyed: Bool) -> Int {
        if container >= 0 {
            if self.keyed == keyed, state.stream.enter(container) { return container }
            state.stream.fail()
            return -1
        }
        guard claim(), let id = state.stream.open(keyed: keyed) else { return -1 }
        container = id
        self.keyed = keyed
        return id
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedStreamEncodingContainer<Key>(encoder: self, id: containerID(keyed: true)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedStreamEncodingContainer(encoder: self, id: containerID(keyed: false))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    // MARK: Single value

    func encodeNil() { if claim() { state.stream.writer.tag(.null) } }
    func encode(_ value: Bool) { if claim() { state.stream.writer.bool(value) } }
    func encode(_ value: String) { if claim() { state.stream.writer.string(value) } }
    func encode(_ value: Double) { if claim() { state.stream.writer.double(value) } }
    func encode(_ value: Float) { if claim() { state.stream.writer.float(value) } }
    func encode(_ value: Int) { if claim() { state.stream.writer.signed(Int64(value)) } }
    func encode(_ value: Int8) { if claim() { state.stream.writer.signed(Int64(value)) } }
    func encode(_ value: Int16) { if claim() { state.stream.writer.signed(Int64(value)) } }
    func encode(_ value: Int32) { if claim() { state.stream.writer.signed(Int64(value)) } }
    func encode(_ value: Int64) { if claim() { state.stream.writer.signed(value) } }
    func encode(_ value: UInt) { if claim() { state.stream.writer.unsigned(UInt64(value)) } }
    func encode(_ value: UInt8) { if claim() { state.stream.writer.unsigned(UInt64(value)) } }
    func encode(_ value: UInt16) { if claim() { state.stream.writer.unsigned(UInt64(value)) } }
    func encode(_ value: UInt32) { if claim() { state.stream.writer.unsigned(UInt64(value)) } }
    func encode(_ value: UInt64) { if claim() { state.stream.writer.unsigned(value) } }

    /// A value through a single-value container: written at this encoder's
    /// place, and what it opens is this encoder's (as the tree does).
    func encode<T: Encodable>(_ value: T) throws {
        guard !wrote, container < 0 else { return state.stream.fail() }
        if claimPrimitive(value) { return }
        let sibling = StreamEncoder(self, key: nil)
        do { try value.encode(to: sibling) } catch {
            state.stream.fail()
            throw error
        }
        sibling.finishEmpty()
        wrote = true
        container = sibling.container
        keyed = sibling.keyed
    }

    /// Writes a carried right's, region's or file's index (`tag`) as the value.
    func writeCarried(_ tag: MessageCodingFormat.Tag, index: Int) {
        if claim() { state.stream.writer.carried(tag, index: index) }
    }

    // MARK: Nested values

    /// Encodes `value`, the next value of this encoder's container (at
    /// `key` in it), whose key or count the container has written.
    @inline(__always)
    func encode<T: Encodable>(_ value: T, at key: @autoclosure () -> any CodingKey) throws {
        if state.stream.writer.primitive(value) { return }
        if T.self == [String].self {
            _ = state.stream.strings(unsafeBitCast(value, to: [String].self))
            return
        }
        try encodeNested(value, at: key())
    }

    private func encodeNested<T: Encodable>(_ value: T, at key: any CodingKey) throws {
        guard depth < MessageCodingFormat.maximumDepth else {
            state.stream.fail()
            throw MessageCodingError(.limitExceeded, "values nested more than \(MessageCodingFormat.maximumDepth) deep",
                                     codingPath: codingPath + [key])
        }
        let child = StreamEncoder(self, key: key)
        do { try value.encode(to: child) } catch {
            state.stream.fail()
            throw error
        }
        child.finishEmpty()
    }

    /// A value that wrote nothing is an empty keyed container, as in the tree.
    private func finishEmpty() {
        if !wrote { _ = containerID(keyed: true) }
    }

    /// Encodes `value` as the top-level value of the stream: false if the
    /// stream failed and the value must be encoded as a tree. What the
    /// value throws is thrown only when the stream did not fail (a failed
    /// stream's tree gives the error).
    static func stream<T: Encodable>(_ value: T, state: EncodingState) throws -> Bool {
        let root = StreamEncoder(state: state)
        do {
            if root.claimPrimitive(value) { return !state.stream.failed }
            try value.encode(to: root)
        } catch {
            if state.stream.failed { return false }
            throw error
        }
        root.finishEmpty()
        state.stream.finish()
        return !state.stream.failed
    }

    /// Writes `value` as this encoder's value if the format has a tag for
    /// its type (true too if the stream failed: nothing more to do).
    private func claimPrimitive<T: Encodable>(_ value: T) -> Bool {
        guard claim() else { return true }
        if state.stream.writer.primitive(value) { return true }
        wrote = false
        return false
    }
}
