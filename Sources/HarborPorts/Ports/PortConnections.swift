// Harbor — the transport as a port received here sees it: the connections
// other processes send through (HarborTransport's PortTransport).
import HarborSystem

/// The connections through which other processes send to a port whose
/// receive right is in this process. HarborTransport implements it; a port
/// holds one once a right to it has left the process
/// (``PortCore/Location/receiving(_:)``).
///
/// The port calls in through these requirements only; the transport hands
/// messages to the port through one call, ``PortCore/admit(_:from:)``
/// (Admission/PortCore+Admission.swift).
package protocol PortConnections: AnyObject, Sendable {
    /// The port's slot counter, shared with every sender.
    var slots: SharedSlots { get }
    /// `slots`' counter.
    var counter: SharedSlots.Counter { get }
    /// Connections open to the port.
    var connectionCount: Int { get }
    /// Reads what the ready connections hold and admits it to `port`,
    /// waiting until `deadline` for something to arrive; with `takeFirst`,
    /// the first message goes straight to the caller when the queue is empty.
    func pump(into port: PortCore, deadline: WaitDeadline, takeFirst: Bool) -> PumpOutcome
    /// A slot of the port's queue came free: wakes senders waiting for one.
    func slotFreed(port: PortCore)
    /// Watches the connections for hang-up, so `port` hears of its last
    /// sender going though nobody receives (a no-senders request).
    func watchHangUps(for port: PortCore)
    /// Stops reading connection `token`: it leaves the readiness set, so
    /// the packets waiting in it wake nobody (its messages park). Called
    /// under the port's lock; a leaf (an `epoll_ctl`).
    func pauseReading(_ token: UInt64)
    /// Reads connection `token` again (under the port's lock; a leaf).
    func resumeReading(_ token: UInt64)
    /// Removes a proxy's death watch (``ProxyWatch``).
    func removeWatch(_ token: UInt64)
    /// From now on, reads the cgroup of each message's sender as the
    /// message arrives, through a pidfd the kernel takes at send time, on
    /// every connection, those to come included
    /// (``ReceiveRight/readSenderCgroups()``). Called under the port's
    /// lock; a leaf (`setsockopt` on each connection).
    func readSenderCgroups()
    /// Closes every connection: the port is destroyed.
    func shutDown()
}

/// The epoll token of a port's own readiness eventfd in its readiness set:
/// the transport's connections use every other token.
package let portReadinessToken: UInt64 = 0
