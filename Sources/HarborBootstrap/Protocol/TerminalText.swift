// Harbor — text from a peer made safe to print on a terminal: controls and invisible format characters escaped.

/// Text that came from another process (a message body, a name, a unit, an
/// error's detail from the name server), made safe to print on a terminal.
///
/// A peer chooses those bytes, and a terminal obeys some of them: C0
/// controls (ESC starts a control sequence), DEL, C1 controls (U+009B is a
/// one-character CSI, U+0085 a line break), bidi controls (U+202E turns the
/// rest of a line around) and invisible format characters (U+200B, U+FEFF)
/// that make two different strings look the same. Every one of them is
/// printed as an escape instead:
///
/// - `\0`, `\t`, `\n`, `\r` for those four;
/// - `\u{1B}` (hex, as in a Swift literal) for every other scalar whose
///   general category is control (Cc: C0, DEL, C1), format (Cf: U+061C,
///   U+200B–U+200F, U+202A–U+202E, U+2060–U+2069, U+FEFF, the tags…), line
///   separator (U+2028) or paragraph separator (U+2029);
/// - `\xFF` for each byte that is not part of valid UTF-8.
///
/// Everything else, letters of any script included ("héllo 東京"), is kept
/// as it is. A backslash is kept too (so escaping twice changes nothing),
/// except by ``quoted(_:)``, which doubles it to stay unambiguous.
package enum TerminalText {
    /// `text` with its controls and invisible format characters escaped.
    package static func escaped(_ text: String) -> String {
        var output = ""
        for scalar in text.unicodeScalars { append(scalar, to: &output, quoting: false) }
        return output
    }

    /// `bytes` read as UTF-8, with controls and invisible format characters
    /// escaped and each byte that is not valid UTF-8 shown as `\xFF`.
    package static func escaped(utf8 bytes: some Collection<UInt8>) -> String {
        var output = ""
        var parser = Unicode.UTF8.ForwardParser()
        var input = bytes.makeIterator()
        var position = bytes.startIndex
        while true {
            switch parser.parseScalar(from: &input) {
            case .valid(let encoded):
                append(Unicode.UTF8.decode(encoded), to: &output, quoting: false)
                position = bytes.index(position, offsetBy: encoded.count)
            case .error(let length):
                for byte in bytes[position...].prefix(length) { output += "\\x" + hex(byte, digits: 2) }
                position = bytes.index(position, offsetBy: length)
            case .emptyInput:
                return output
            }
        }
    }

    /// `text` in double quotes, escaped as ``escaped(_:)`` does and with
    /// `"` and `\` escaped too: a message body's text.
    package static func quoted(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars { append(scalar, to: &output, quoting: true) }
        return output + "\""
    }

    /// Whether the terminal would act on `scalar` or show nothing for it.
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    private static func append(_ scalar: Unicode.Scalar, to output: inout String, quoting: Bool) {
        switch scalar {
        case "\0": output += "\\0"
        case "\t": output += "\\t"
        case "\n": output += "\\n"
        case "\r": output += "\\r"
        case "\"" where quoting: output += "\\\""
        case "\\" where quoting: output += "\\\\"
        case _ where needsEscaping(scalar): output += "\\u{" + hex(scalar.value, digits: 1) + "}"
        default: output.unicodeScalars.append(scalar)
        }
    }

    private static func hex(_ value: some BinaryInteger, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
