// Harbor — where a client's requests to the name server are answered: one reply port, one shared send right to it.
import HarborPorts

/// The port a client's requests are answered on, and the one send right to
/// it that every request carries as its reply right.
///
/// The port shares its exported connection
/// (``ReceiveRight/shareExportedConnection()``): each request carries a copy
/// of ``right``, and every copy passes the same connection, so a request
/// makes no socket pair and adds nothing to the port's epoll set (a
/// send-once reply right would: one new connection per request). The
/// server's reply right still leads back to this process, as the server
/// requires (`Message.replyRightReceiver`): the connection is made here.
///
/// A send right, unlike a send-once right, says nothing when the server dies
/// holding the request (the connection stays open: this process keeps its
/// sending end). That is heard instead through a dead-name notification on
/// the bootstrap right, asked for once per link (``watch(_:)``) into this
/// port: `BootstrapLink.exchange` takes it as "the server dropped the
/// request", as it took the unused send-once right's notification.
///
/// The right is **registered** with the server once per link
/// (`registerReplies`): later requests name its handle instead of carrying a
/// copy, so they pass no descriptors and the server examines none. A server
/// that refuses the registration (an older one, or the uid at its limit) is
/// sent a copy of the right with every request, as before.
///
/// Replaced after a timeout, so a late reply cannot answer the next request
/// (the new port is registered anew; the old registration ends with its port).
///
/// **Cost:** one port; its connection and slot counter once the first
/// request leaves (three descriptors while it lives), and the bootstrap
/// connection in its epoll set.
/// **Thread safety:** a value with one owner (kept under a lock by its users).
struct BootstrapReplies: ~Copyable, Sendable {
    /// Where the replies arrive.
    let port: ReceiveRight
    /// The reply right every request carries (a copy of it).
    let right: SendRight
    /// The link generation whose bootstrap right has a dead-name request into `port`.
    private var watched: Int?
    /// What the server of a link generation said to registering ``right``.
    var registration: Registration?

    /// A link generation's registration of ``right``.
    struct Registration {
        let generation: Int
        /// The handle requests name; nil: the server refused, requests carry the right.
        let handle: UInt64?
    }

    init() {
        port = ReceiveRight()
        port.shareExportedConnection()
        right = port.makeSendRight()
    }

    /// Asks, once per link generation, for a dead-name notification into
    /// `port` when `link`'s bootstrap right dies.
    mutating func watch(_ link: BootstrapLink.Current) {
        guard watched != link.generation else { return }
        watched = link.generation
        link.right.requestDeadNameNotification(to: port.makeSendOnceRight())
    }

    /// Whether `reply` is the notification that `link`'s server is gone
    /// (notifications about an earlier link's right are not).
    static func isServerDeath(_ reply: borrowing Message, on link: BootstrapLink.Current) -> Bool {
        if case .deadName(let name) = reply.notification { return name == link.right.name }
        return false
    }
}
