// Harbor — the bootstrap protocol's message ids, names and listing format (Docs/Bootstrap.md).

/// The requests a client sends to the bootstrap port, as message ids, and
/// the rules both sides check. Every request carries a reply right; the
/// reply's id is 0 on success, else a ``BootstrapError/Code`` number with a
/// one-line reason as its text.
package enum BootstrapRequest {
    /// Body: the name. Reply: right 0 is a send right.
    package static let lookUp: Int32 = 0x4842_0001
    /// Body: the name. Reply: right 0 is the name's receive right.
    package static let checkIn: Int32 = 0x4842_0002
    /// Body: the name; right 0: the send right to publish. Reply: empty.
    package static let register: Int32 = 0x4842_0003
    /// Body: the name. Reply: empty.
    package static let unregister: Int32 = 0x4842_0004
    /// Body: empty. Reply: the listing (``BootstrapEntry/encode(_:)``).
    package static let list: Int32 = 0x4842_0005
}

/// The message id `harbor ping` sends (with a send-once reply right); a
/// service built on Harbor answers it with the same id and body. "PING".
public let bootstrapPingID: Int32 = 0x5049_4E47

/// Checks names on both sides of the protocol.
package enum BootstrapName {
    /// Longest name in bytes (launchd's `name_t` is 128 bytes).
    package static let maximumLength = 128

    /// Whether `name` is a valid service name: 1–128 bytes of `A–Z a–z 0–9 . _ - : @`.
    package static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "@"):
                true
            default:
                false
            }
        }
    }

    /// The name in a request body, or nil if it is not valid UTF-8 or not a valid name.
    package static func decode(_ body: [UInt8]) -> String? {
        guard let name = String(validating: body, as: UTF8.self), isValid(name) else { return nil }
        return name
    }
}
