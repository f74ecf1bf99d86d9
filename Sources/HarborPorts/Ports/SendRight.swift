// Harbor — the send right: any number of holders, counted by the port.
import HarborSystem

/// The right to send to a port.
///
/// Copyable: each copy is another reference to the same right, and the port
/// counts rights, so when the last one anywhere is gone the receiver can hear
/// ``PortNotification/noSenders(port:)``. Mach's move-send and copy-send are
/// the same call here: ``Message/attach(_:)-(SendRight)`` takes a reference,
/// and whether yours stays alive is up to you.
///
/// **Thread safety:** any thread; sends from many threads are serialised by
/// the port.
public struct SendRight: Hashable, Sendable, CustomStringConvertible {
    package let token: SendRightToken

    package init(token: SendRightToken) { self.token = token }

    /// The identity of the port this right sends to.
    public var name: PortName { token.port.name }

    /// Whether the port's receive right is gone (Mach: a dead name).
    public var isDead: Bool { token.port.isDead }

    /// The process this right's messages reach, as far as the kernel
    /// vouches: this process for a port received here; for a port in another
    /// process, the process that made the connection the right sends through
    /// (`SO_PEERCRED`: whoever passes the socket on cannot change it), which
    /// is the port's receiver unless that process moved the receive right on
    /// since. Nil if that cannot be read.
    package var receivingProcess: ProcessIdentity? { token.port.receivingProcess }

    /// Queues `message` on the port.
    ///
    /// - Parameters:
    ///   - message: the message, consumed; a failed send gives it back in the error.
    ///   - timeout: how long to wait for room in a full queue: `nil`
    ///     waits as long as it takes, `.zero` tries once.
    /// - Throws: ``PortError/Code/deadName`` if the receive right is gone,
    ///   ``PortError/Code/queueFull`` (timeout zero) or
    ///   ``PortError/Code/timedOut`` if the queue stayed full,
    ///   ``PortError/Code/messageTooLarge``. The error holds the message
    ///   (``PortError/takeUndeliveredMessage()``): nothing is lost.
    /// **Cost:** one lock, plus one eventfd write when the queue was empty
    /// and something waits on it. **Mach equivalent:** `mach_msg(MACH_SEND_MSG)`.
    public func send(_ message: consuming Message, timeout: Duration? = nil) throws(PortError) {
        try send(message, deadline: WaitDeadline(timeout: timeout))
    }

    /// ``send(_:timeout:)`` against a deadline already running (the send
    /// phase of ``sendAndReceive(_:timeout:)``).
    package func send(_ message: consuming Message, deadline: WaitDeadline) throws(PortError) {
        var content = message.takeContent()
        try content.prepareForSending()
        try token.port.enqueue(content, deadline: deadline)
    }

    /// Passes on `message`, received by this process, keeping who sent it:
    /// to a port received in this process its trailer stays as it arrived
    /// (its sender, and the relay and claim of a relayed message), where
    /// ``send(_:timeout:)`` would make this process its sender; to a port in
    /// another process the kernel names this process, which relays it. Used
    /// by the name server's hand-over and a session's re-check-in, so a
    /// message queued for a name keeps its real sender (P11).
    /// - Throws: as ``send(_:timeout:)``.
    package func relay(_ message: consuming Message, timeout: Duration? = nil) throws(PortError) {
        var content = message.takeContent()
        try content.prepareForRelaying()
        try token.port.enqueue(content, deadline: WaitDeadline(timeout: timeout))
    }

    /// Asks for a ``PortNotification/deadName(port:)`` message through
    /// `target` when this port's receive right dies; at once if it is dead.
    public func requestDeadNameNotification(to target: consuming SendOnceRight) {
        token.port.requestDeadName(target.token)
    }

    /// For tests: sleeps until a sender (in any process) waits for room in
    /// this right's port, which must be in another process. False on timeout.
    package func waitUntilASenderBlocks(timeout: Duration) -> Bool {
        guard let route = token.port.state.withGuarded({ $0.route }), let slots = route.slots else { return false }
        return slots.waitForWaiter(timeout: timeout)
    }

    /// Two send rights are equal when they name the same port.
    public static func == (lhs: SendRight, rhs: SendRight) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    public var description: String { "send right to \(name)" }
}
