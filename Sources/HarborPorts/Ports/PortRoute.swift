// Harbor — the transport as a proxy sees it: the connection its sends go
// through to a port received in another process (HarborTransport's
// RemoteRoute).
import HarborSystem

/// Where a proxy's messages go: a connection to a port whose receive right
/// is in another process. HarborTransport implements it; a proxy holds one
/// (``PortCore/Location/proxy(_:)``) and every send goes through it.
package protocol PortRoute: AnyObject, Sendable {
    /// The port's shared slot counter; nil for a send-once connection and
    /// the bootstrap connection, whose messages never count.
    var slots: SharedSlots? { get }
    /// Whether the receiving side is gone (every receiving end closed).
    var hasHungUp: Bool { get }
    /// The process that made the connection (`SO_PEERCRED`).
    func creator() throws(SystemError) -> ProcessIdentity
    /// Sends `content`, waiting for a slot and for socket room until `deadline`.
    func send(_ content: MessageContent, deadline: WaitDeadline, to port: PortCore?) throws(PortError)
    /// Arms a dead-name request of `port`, this route's proxy: `target` hears
    /// when the receiving side goes, without a thread of its own.
    func requestDeadName(of port: PortCore, notifying target: SendOnceToken)
    /// Removes the death watches `port` armed through ``requestDeadName(of:notifying:)``.
    func cancelDeathWatches(_ tokens: [UInt64])
}
