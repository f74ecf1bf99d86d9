// HarborXPC — the message ids a session and a listener exchange.
import HarborPorts

/// The message ids of the session protocol (Docs/XPC.md, "On the wire").
/// `XPC` in ASCII in the high bytes, the kind in the low byte.
enum XPCWire {
    /// Client → listener: open a session; carries a send-once reply right,
    /// and as right 0 a send right to the client's session reply port (the
    /// port ``call`` replies come to).
    static let connect: Int32 = 0x5850_4301
    /// Listener → client: accepted; right 0 is a send right to the session's port.
    static let accepted: Int32 = 0x5850_4302
    /// Listener → client: refused; the text is the reason.
    static let rejected: Int32 = 0x5850_4303
    /// Client → session: a one-way message; the body is the Codable value.
    static let message: Int32 = 0x5850_4304
    /// Client → session: a message that expects a reply (send-once reply right).
    static let request: Int32 = 0x5850_4305
    /// Session → client: a reply; the body is the Codable value.
    static let reply: Int32 = 0x5850_4306
    /// Session → client: a refusal of one message; the text is `code TAB reason`.
    static let failure: Int32 = 0x5850_4307
    /// Client → session: the client cancelled the session.
    static let cancel: Int32 = 0x5850_4308
    /// Client → session: a request for a subscription (`XPCSession.subscribe`):
    /// a request whose last two carried rights are a send right (the events)
    /// and a send-once right (the end) to the subscriber's port.
    static let subscribe: Int32 = 0x5850_4309
    /// Publisher → subscriber: one event; the body is the Codable value.
    static let event: Int32 = 0x5850_430A
    /// Publisher → subscriber, on the send-once right: the publisher ended
    /// the stream; the text is `code TAB reason`.
    static let streamEnd: Int32 = 0x5850_430B
    /// Client → listener: send the published interface (`harbor introspect`);
    /// carries a send-once reply right, opens no session.
    static let introspect: Int32 = 0x5850_430C
    /// Listener → client: the interface; the body is an `XPCInterface`.
    static let interface: Int32 = 0x5850_430D
    /// Client → session: a message that expects a reply, numbered: no reply
    /// right; the body's last 8 bytes are the call number (little-endian),
    /// and the reply (``reply`` or ``failure``, its body ending with the same
    /// 8 bytes) goes to the reply port the client gave at connect.
    static let call: Int32 = 0x5850_430E
    /// Local only: wakes a thread of this process (a cancel, a death seen elsewhere).
    static let wake: Int32 = 0x5850_43FF
    /// The longest reason text a peer's refusal may carry; longer is cut.
    static let maximumReason = 512

    /// The bytes a call number adds at the end of a body.
    static let callNumberSize = 8

    /// Appends `number` to `message`'s body (little-endian).
    static func append(_ number: UInt64, to message: inout Message) {
        withUnsafeBytes(of: number.littleEndian) { message.content.body.append(contentsOf: $0) }
    }

    /// Takes the call number off the end of `message`'s body; nil if the
    /// body is too short to hold one.
    static func takeNumber(from message: inout Message) -> UInt64? {
        let count = message.content.body.count
        guard count >= callNumberSize else { return nil }
        var number: UInt64 = 0
        for index in (count - callNumberSize)..<count {
            number = number >> 8 | UInt64(message.content.body[index]) << 56
        }
        message.content.body.removeLast(callNumberSize)
        return number
    }

    /// A reason from a peer, bounded and made printable.
    static func reason(_ text: String) -> String {
        String(text.unicodeScalars.prefix(maximumReason).map { $0.properties.isWhitespace || $0.value >= 0x20 ? Character($0) : "?" })
    }
}
