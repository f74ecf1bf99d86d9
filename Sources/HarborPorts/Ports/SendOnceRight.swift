// Harbor — the send-once right: exactly one message, or a notification.
import HarborSystem

/// The right to send exactly one message to a port; the usual reply right.
///
/// `~Copyable` and consumed by ``send(_:)``, so the compiler rules out a
/// second reply. If it dies unused, its port receives a
/// ``PortNotification/sendOnce(port:)`` notification, so a client waiting
/// for a reply hears that none will come. Messages sent with it never wait
/// for queue room and do not count against the limit (Mach).
///
/// **Thread safety:** a value with one owner; any thread.
public struct SendOnceRight: ~Copyable, Sendable {
    package let token: SendOnceToken

    package init(token: SendOnceToken) { self.token = token }

    /// The identity of the port this right sends to.
    public var name: PortName { token.port.name }

    /// Sends `message` and uses the right up.
    /// - Throws: ``PortError/Code/deadName`` if the receive right is gone, or
    ///   ``PortError/Code/messageTooLarge``, in which case the right dies
    ///   unused and its port gets a send-once notification. Either way the
    ///   error holds the message.
    public consuming func send(_ message: consuming Message) throws(PortError) {
        var content = message.takeContent()
        try content.prepareForSending()
        content.countsAgainstLimit = false
        _ = token.markUsed()
        try token.port.enqueue(content, deadline: .immediately)
    }
}
