// HarborXPC — the message ids a session and a listener exchange.
import HarborPorts

/// The message ids of the session protocol (Docs/XPC.md, "On the wire").
/// `XPC` in ASCII in the high bytes, the kind in the low byte.
enum XPCWire {
    /// Client → listener: open a session; carries a send-once reply right.
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
    /// Local only: wakes a thread of this process (a cancel, a death seen elsewhere).
    static let wake: Int32 = 0x5850_43FF
    /// The longest reason text a peer's refusal may carry; longer is cut.
    static let maximumReason = 512

    /// A reason from a peer, bounded and made printable.
    static func reason(_ text: String) -> String {
        String(text.unicodeScalars.prefix(maximumReason).map { $0.properties.isWhitespace || $0.value >= 0x20 ? Character($0) : "?" })
    }
}
