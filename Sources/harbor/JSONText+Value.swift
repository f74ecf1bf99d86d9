// Harbor — an XPCValue as JSON text, for `harbor call`'s output.
import HarborXPC

extension JSONText {
    /// `value` as one line of JSON, an object's members in key order, every
    /// string escaped to printable ASCII (``string(_:)``): a reply is a
    /// peer's text. Byte strings are arrays of numbers; a double that is not
    /// finite, which JSON cannot say, is `null`.
    static func value(_ value: XPCValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): flag ? "true" : "false"
        case .int(let number): String(number)
        case .uint(let number): String(number)
        case .double(let number): number.isFinite ? "\(number)" : "null"
        case .string(let text): string(text)
        case .bytes(let bytes): "[" + bytes.map { String($0) }.joined(separator: ",") + "]"
        case .array(let items): "[" + items.map { Self.value($0) }.joined(separator: ",") + "]"
        case .object(let members):
            object(members.keys.sorted().map { ($0, Self.value(members[$0] ?? .null)) })
        }
    }
}
