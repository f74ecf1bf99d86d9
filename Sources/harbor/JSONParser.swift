// Harbor — the JSON `harbor call` takes, parsed into an XPCValue (no Foundation; bounded depth).
import HarborXPC

/// Parses one JSON text (RFC 8259) into an ``XPCValue``: a number with a
/// fraction or an exponent is a `double`, any other an `int` (a `uint` above
/// `Int64.max`); nesting is limited to 64, as message bodies are.
struct JSONParser {
    /// Why the text is not JSON, and where.
    struct Failure: Error {
        let message: String
    }

    private let bytes: [UInt8]
    private var index = 0
    private static let maximumDepth = 64

    private init(_ text: String) { bytes = Array(text.utf8) }

    /// The value `text` holds, or a ``Failure`` naming the byte offset.
    static func parse(_ text: String) throws(Failure) -> XPCValue {
        var parser = JSONParser(text)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.failure("text after the value") }
        return value
    }

    private func failure(_ what: String) -> Failure { Failure(message: "\(what) at byte \(index)") }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func literal(_ word: String, _ value: XPCValue) throws(Failure) -> XPCValue {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw failure("not a JSON value")
        }
        index += expected.count
        return value
    }

    private mutating func value(depth: Int) throws(Failure) -> XPCValue {
        skipSpace()
        guard index < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
            index += 1
            var items: [XPCValue] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw failure("an array that does not end") }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "]") { return .array(items) }
                guard bytes[index - 1] == UInt8(ascii: ",") else { throw failure("expected , or ]") }
            }
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
            index += 1
            var members: [String: XPCValue] = [:]
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
                let key = try string()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected :") }
                index += 1
                guard members[key] == nil else { throw failure("the key \(JSONText.string(key)) twice") }
                members[key] = try value(depth: depth + 1)
                skipSpace()
                guard index < bytes.count else { throw failure("an object that does not end") }
                index += 1
                if bytes[index - 1] == UInt8(ascii: "}") { return .object(members) }
                guard bytes[index - 1] == UInt8(ascii: ",") else { throw failure("expected , or }") }
            }
        default: return try number()
        }
    }

    private mutating func number() throws(Failure) -> XPCValue {
        let start = index
        while index < bytes.count, "0123456789+-.eE".utf8.contains(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first) else {
            index = start
            throw failure("not a JSON value")
        }
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
            if let value = Int64(text) { return .int(value) }
            if let value = UInt64(text) { return .uint(value) }
        }
        guard let value = Double(text), value.isFinite else {
            index = start
            throw failure("not a number")
        }
        return .double(value)
    }

    private mutating func string() throws(Failure) -> String {
        index += 1  // the opening quote
        var out: [UInt8] = []
        var pendingHigh: UInt16?
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                let simple: [UInt8: UInt8] = [0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C,
                                              0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
                if let plain = simple[escape] {
                    out.append(plain)
                    continue
                }
                guard escape == UInt8(ascii: "u"), bytes.count - index >= 4,
                      let unit = UInt16(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
                    throw failure("a bad escape in a string")
                }
                index += 4
                if (0xD800...0xDBFF).contains(unit) {
                    pendingHigh = unit
                    continue
                }
                var scalar: Unicode.Scalar?
                if (0xDC00...0xDFFF).contains(unit), let high = pendingHigh {
                    scalar = Unicode.Scalar((UInt32(high - 0xD800) << 10 | UInt32(unit - 0xDC00)) + 0x10000)
                } else {
                    scalar = Unicode.Scalar(unit)
                }
                pendingHigh = nil
                guard let scalar else { throw failure("a lone surrogate in a string") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            case 0x00..<0x20:
                throw failure("a control character in a string")
            default:
                out.append(byte)
            }
        }
        throw failure("a string that does not end")
    }
}
