// Harbor — one decoding's parsed body and the message's rights and regions.
import HarborPorts

/// What every decoder and container of one ``MessageDecoder`` call shares
/// (one thread's, for the length of the call: `@exclusivity(unchecked)`
/// spares the runtime's access checks on its few mutable fields):
/// the checked body (``BodyReader``), the message's carried rights, of
/// which each one a value takes is taken exactly once, and its regions.
final class DecodingState {
    let body: [UInt8]
    let tape: [TapeNode]
    let strings: [String]
    private let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    /// ``userInfo``, made the first time a value asks for it.
    @exclusivity(unchecked) private var anyUserInfo: [CodingUserInfoKey: Any]?
    @exclusivity(unchecked) private(set) var rights: [CarriedRight]
    let regions: [MappedRegion]
    /// The message's carried files (nil: taken before this decoding).
    @exclusivity(unchecked) private(set) var files: [CarriedFile?]
    /// The indices of the files taken out, to mark taken in the message.
    @exclusivity(unchecked) private(set) var takenFiles: [Int] = []
    /// The indices of the rights taken out, to mark taken in the message.
    @exclusivity(unchecked) private(set) var taken: [Int] = []
    /// Where the last key looked up in keyed container ``hintContainer``
    /// was found, plus one value: types decode their keys in the order they
    /// encoded them, so the next key is usually the next value.
    @exclusivity(unchecked) var hintContainer = -1
    @exclusivity(unchecked) var hint = 0

    init(body: [UInt8], reader: consuming BodyReader, rights: [CarriedRight], regions: [MappedRegion],
         files: [CarriedFile?] = [], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.files = files
        self.body = body
        tape = reader.tape
        strings = reader.strings
        self.rights = rights
        self.regions = regions
        sendableUserInfo = userInfo
    }

    /// The decoder's `userInfo`: the one the decoding was given, converted
    /// once, when a value first asks (most never do).
    var userInfo: [CodingUserInfoKey: Any] {
        if let anyUserInfo { return anyUserInfo }
        let converted: [CodingUserInfoKey: Any] = sendableUserInfo
        anyUserInfo = converted
        return converted
    }

    /// Takes the right that node `node` names (the reader checked its kind).
    func takeRight(_ node: Int, _ tag: MessageCodingFormat.Tag, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError)
        -> CarriedRight
    {
        try expect(node, tag, path: path())
        let index = Int(tape[node].payload)
        let right = rights[index]
        guard right.kind != .taken else {
            throw MessageCodingError(.invalidRightIndex, "right \(index) was already decoded", codingPath: path())
        }
        rights[index] = .taken
        taken.append(index)
        return right
    }

    func region(_ node: Int, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> MappedRegion {
        try expect(node, .region, path: path())
        return regions[Int(tape[node].payload)]
    }

    /// Takes the file that node `node` names out of the message.
    func takeFile(_ node: Int, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> CarriedFile {
        try expect(node, .file, path: path())
        let index = Int(tape[node].payload)
        guard let file = files[index] else {
            throw MessageCodingError(.invalidRightIndex, "file \(index) was already taken", codingPath: path())
        }
        files[index] = nil
        takenFiles.append(index)
        return file
    }

    func isNull(_ node: Int) -> Bool { tape[node].tag == .null }

    /// Whether the key of the value at `node` is `name`, compared as UTF-8 bytes.
    func key(of node: Int, is name: String) -> Bool {
        let start = Int(tape[node].keyStart)
        let count = Int(tape[node].keyLength)
        var name = name
        return name.withUTF8 { utf8 in
            guard utf8.count == count else { return false }
            return body.withUnsafeBufferPointer { body in
                var index = 0
                while index < count {
                    guard body[start &+ index] == utf8[index] else { return false }
                    index &+= 1
                }
                return true
            }
        }
    }

    /// The key of the value at `node` (checked UTF-8 when parsed).
    func keyString(_ node: Int) -> String {
        let start = Int(tape[node].keyStart)
        return String(decoding: body[start..<(start + Int(tape[node].keyLength))], as: UTF8.self)
    }

    func bool(_ node: Int, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Bool {
        switch tape[node].tag {
        case .true: return true
        case .false: return false
        default: throw mismatch(node, Bool.self, path: path())
        }
    }

    @inline(__always)
    func integer<T: FixedWidthInteger>(_ node: Int, _ type: T.Type, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> T {
        let payload = tape[node].payload
        let value: T?
        switch tape[node].tag {
        case .signed: value = T(exactly: Int64(bitPattern: payload >> 1) ^ -Int64(bitPattern: payload & 1))
        case .unsigned: value = T(exactly: payload)
        default: throw mismatch(node, T.self, path: path())
        }
        guard let value else {
            throw MessageCodingError(.dataCorrupted, "the number does not fit \(T.self)", codingPath: path())
        }
        return value
    }

    func double(_ node: Int, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Double {
        switch tape[node].tag {
        case .double: return Double(bitPattern: tape[node].payload)
        case .float: return Double(Float(bitPattern: UInt32(truncatingIfNeeded: tape[node].payload)))
        default: throw mismatch(node, Double.self, path: path())
        }
    }

    func float(_ node: Int, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> Float {
        switch tape[node].tag {
        case .float: return Float(bitPattern: UInt32(truncatingIfNeeded: tape[node].payload))
        case .double:
            let double = Double(bitPattern: tape[node].payload)
            guard let value = Float(exactly: double) else {
                throw MessageCodingError(.dataCorrupted, "\(double) does not fit Float", codingPath: path())
            }
            return value
        default: throw mismatch(node, Float.self, path: path())
        }
    }

    func string(_ node: Int, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) -> String {
        try expect(node, .string, path: path())
        return strings[Int(tape[node].payload)]
    }

    /// The strings of an array of strings, or nil if the node is not one
    /// (the caller then decodes it value by value, for the typed error).
    func strings(_ node: Int) -> [String]? {
        guard tape[node].tag == .array else { return nil }
        let end = Int(tape[node].end)
        var strings: [String] = []
        strings.reserveCapacity(Int(tape[node].count))
        var child = node + 1
        while child < end {
            guard tape[child].tag == .string else { return nil }
            strings.append(self.strings[Int(tape[child].payload)])
            child += 1
        }
        return strings
    }

    /// A byte string's bytes, or nil if the node is not one.
    func bytes(_ node: Int) -> [UInt8]? {
        guard tape[node].tag == .bytes else { return nil }
        let start = Int(tape[node].start)
        return Array(body[start..<(start + Int(tape[node].count))])
    }

    func expect(_ node: Int, _ tag: MessageCodingFormat.Tag, path: @autoclosure () -> [any CodingKey]) throws(MessageCodingError) {
        guard tape[node].tag == tag else { throw mismatch(node, tag, path: path()) }
    }

    func mismatch(_ node: Int, _ expected: Any, path: @autoclosure () -> [any CodingKey]) -> MessageCodingError {
        let found = tape[node].tag
        if found == .null {
            return MessageCodingError(.valueNotFound, "expected \(expected), found nil", codingPath: path())
        }
        return MessageCodingError(.typeMismatch, "expected \(expected), found \(found)", codingPath: path())
    }
}
