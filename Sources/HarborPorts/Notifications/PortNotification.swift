// Harbor — the runtime's notifications, delivered as messages.
//
// Mach's notifications are messages the kernel sends to a port the requester
// names; Harbor's are the same. Each request hands over a send-once right
// to the port that should hear, so a notification never waits for queue
// room and fires at most once. A request that never fires releases that
// right, and its port gets a send-once notification instead, as in Mach.
import HarborSystem

/// A notification the runtime sent, decoded from a received ``Message``.
public enum PortNotification: Hashable, Sendable {
    /// The last send right to `port` is gone. Mach: `MACH_NOTIFY_NO_SENDERS`.
    case noSenders(port: PortName)
    /// `port`'s receive right was destroyed (or its process died).
    /// Mach: `MACH_NOTIFY_DEAD_NAME`.
    case deadName(port: PortName)
    /// A send-once right to `port` died unused. Mach: `MACH_NOTIFY_SEND_ONCE`.
    case sendOnce(port: PortName)
    /// `port`'s receive right would have been destroyed; the message carries
    /// it as right 0 instead. Mach: `MACH_NOTIFY_PORT_DESTROYED`.
    case portDestroyed(port: PortName)

    /// The message ids notifications use; Mach's values (`MACH_NOTIFY_*`).
    public enum ID {
        /// `MACH_NOTIFY_PORT_DESTROYED` (0105).
        public static let portDestroyed: Int32 = 0o105
        /// `MACH_NOTIFY_NO_SENDERS` (0106).
        public static let noSenders: Int32 = 0o106
        /// `MACH_NOTIFY_SEND_ONCE` (0107).
        public static let sendOnce: Int32 = 0o107
        /// `MACH_NOTIFY_DEAD_NAME` (0110).
        public static let deadName: Int32 = 0o110
    }

    /// The port the notification is about.
    public var port: PortName {
        switch self {
        case .noSenders(let port), .deadName(let port), .sendOnce(let port), .portDestroyed(let port): port
        }
    }
}

extension Message {
    /// The notification this message is, or `nil` for an ordinary message.
    /// Only messages the runtime generated qualify: a sender cannot forge one.
    public var notification: PortNotification? {
        guard content.isNotification, content.body.count == 8 else { return nil }
        var raw: UInt64 = 0
        for (index, byte) in content.body.enumerated() { raw |= UInt64(byte) << (8 * UInt64(index)) }
        let port = PortName(rawValue: raw)
        switch content.id {
        case PortNotification.ID.noSenders: return .noSenders(port: port)
        case PortNotification.ID.deadName: return .deadName(port: port)
        case PortNotification.ID.sendOnce: return .sendOnce(port: port)
        case PortNotification.ID.portDestroyed: return .portDestroyed(port: port)
        default: return nil
        }
    }
}

/// Builds and sends notification messages.
package enum NotificationDelivery {
    package enum Kind {
        case noSenders, deadName, sendOnce, portDestroyed

        var id: Int32 {
            switch self {
            case .noSenders: PortNotification.ID.noSenders
            case .deadName: PortNotification.ID.deadName
            case .sendOnce: PortNotification.ID.sendOnce
            case .portDestroyed: PortNotification.ID.portDestroyed
            }
        }
    }

    package static func content(_ kind: Kind, about subject: PortName,
                                carrying right: CarriedRight? = nil) -> MessageContent {
        var body = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 { body[index] = UInt8(truncatingIfNeeded: subject.rawValue >> (8 * UInt64(index))) }
        var content = MessageContent(
            id: kind.id, body: body, rights: right.map { [$0] } ?? [],
            trailer: MessageTrailer(sender: .current, isNotification: true))
        content.countsAgainstLimit = false
        return content
    }

    /// Uses the send-once right `target` to deliver a notification.
    package static func deliver(_ kind: Kind, about subject: PortName, to target: SendOnceToken,
                                carrying right: CarriedRight? = nil) {
        _ = target.markUsed()
        target.port.deliverNotification(content(kind, about: subject, carrying: right))
    }
}
