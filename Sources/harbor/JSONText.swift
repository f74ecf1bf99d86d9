// Harbor — JSON output for `--json`: strings escaped to printable ASCII, so a peer's name cannot drive a terminal.

/// Builds JSON text for the CLI's `--json` output.
///
/// Every string is escaped to printable ASCII: `"` and `\` with a
/// backslash, everything outside U+0020–U+007E as `\uXXXX` (UTF-16, with
/// surrogate pairs), so names and units from other processes can neither
/// break the document nor drive the terminal it is printed on.
enum JSONText {
    /// `text` as a quoted JSON string.
    static func string(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }

    /// An object from its members, in order; each value is JSON text already.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// A quoted string, or `null`.
    static func optional(_ text: String?) -> String { text.map(string) ?? "null" }
}
