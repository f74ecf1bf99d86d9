// Harbor — the receive right: the one owner of a port's queue.
import HarborSystem

/// The right to receive from a port; creating one creates the port.
///
/// There is exactly one receive right per port, so the type is `~Copyable`:
/// it can be moved (into a message, into a run-loop source) but never
/// duplicated. When it dies the port dies: queued messages are destroyed
/// with the rights they carry, senders get ``PortError/Code/deadName``, and
/// dead-name notifications go out. A port-destroyed request turns that death
/// into a hand-over instead (``requestPortDestroyedNotification(to:)``).
///
/// The port's receive side is a descriptor that polls readable exactly while
/// a message waits; ports created in bulk pay for it only once something
/// waits on them.
///
/// **Thread safety:** a value with one owner; the operations may run on any
/// thread, and senders on other threads need no coordination.
/// **Mach equivalent:** `mach_port_allocate(MACH_PORT_RIGHT_RECEIVE)`.
public struct ReceiveRight: ~Copyable, Sendable {
    package let token: ReceiveRightToken
    package var core: PortCore { token.port }

    /// Creates a new port with an empty queue and the default limit of 5.
    /// Costs one small allocation; no system call.
    public init() {
        token = ReceiveRightToken(port: PortCore())
    }

    package init(token: ReceiveRightToken) { self.token = token }

    /// The port's identity, equal to ``SendRight/name`` of its send rights.
    public var name: PortName { core.name }

    /// Makes a new send right (Mach: `MACH_MSG_TYPE_MAKE_SEND`).
    public func makeSendRight() -> SendRight {
        SendRight(token: SendRightToken(port: core))
    }

    /// Makes a send-once right: one message, and a send-once notification if
    /// it dies unused (Mach: `MACH_MSG_TYPE_MAKE_SEND_ONCE`).
    public func makeSendOnceRight() -> SendOnceRight {
        SendOnceRight(token: SendOnceToken(port: core))
    }

    /// Takes the next message, waiting for one.
    ///
    /// - Parameter timeout: `nil` waits as long as it takes; `.zero` only
    ///   looks. Costs one lock when a message waits; otherwise one `ppoll`.
    /// - Throws: ``PortError/Code/timedOut`` when none arrived in time.
    /// **Mach equivalent:** `mach_msg(MACH_RCV_MSG)`.
    public func receive(timeout: Duration? = nil) throws(PortError) -> Message {
        Message(content: try core.dequeue(deadline: WaitDeadline(timeout: timeout)))
    }

    /// Takes the next message if one waits; never blocks.
    public func tryReceive() -> Message? {
        core.tryDequeue().map { Message(content: $0) }
    }

    /// The most messages the queue holds before senders wait (default 5).
    /// Messages sent to send-once rights do not count.
    public var queueLimit: Int { core.status.queueLimit }

    /// Sets the queue limit, from 0 to 1024 as in Mach. Raising it lets
    /// waiting senders proceed.
    /// - Throws: ``PortError/Code/invalidArgument`` outside that range.
    /// **Mach equivalent:** `mach_port_set_attributes(MACH_PORT_LIMITS_INFO)`.
    public func setQueueLimit(_ limit: Int) throws(PortError) {
        try core.setQueueLimit(limit)
    }

    /// From now on, every send right to this port that leaves the process
    /// shares one connection, which this process keeps open until the
    /// receive right moves: sending a send right to a thousand processes
    /// costs one connection, not a thousand. All of them then share that
    /// connection's socket buffer and its pause at a full queue (as Mach's
    /// senders share a full queue), and the port sees one sender there
    /// until the receive right moves, so a no-senders request waits for that.
    /// The name server hands out the ports of names no service holds yet
    /// this way, so look-ups mint nothing (P12).
    package func shareExportedConnection() {
        core.state.withGuarded { $0.sharesExports = true }
    }

    /// From now on, each message another process sends to this port
    /// carries its sender's cgroup v2 path (``MessageTrailer/senderCgroup``),
    /// read as it is received through a pidfd the kernel took for the sender
    /// when it sent (`SO_PASSPIDFD`, Linux 6.5): a sender that ended before
    /// then is reported ended, never confused with a process that took its
    /// pid. The pidfd is closed as soon as the path is read; no descriptor
    /// stays with the message. Costs each such message a read of
    /// `/proc/PID/cgroup`; ports that do not ask pay nothing. Where the
    /// kernel has no `SO_PASSPIDFD`, messages carry no path, and the
    /// sender's cgroup can be read by pid only (`ProcessCgroup.path(of:)`).
    /// An XPC listener asks when its requirement names a cgroup.
    package func readSenderCgroups() {
        core.state.withGuarded { guarded in
            guarded.readsSenderCgroups = true
            guarded.transport?.readSenderCgroups()
        }
    }

    /// A snapshot of the port's counters. **Mach equivalent:** `mach_port_get_attributes`.
    public var status: PortStatus { core.status }

    /// Asks for a ``PortNotification/noSenders(port:)`` message through
    /// `target` when the number of send rights next drops to zero. Replaces
    /// an earlier request (whose right then dies unused).
    public func requestNoSendersNotification(to target: consuming SendOnceRight) {
        core.requestNoSenders(target.token)
    }

    /// Asks that, when this right dies, it be sent through `target` in a
    /// ``PortNotification/portDestroyed(port:)`` message instead, with its
    /// queue intact. Fires once.
    public func requestPortDestroyedNotification(to target: consuming SendOnceRight) {
        core.requestPortDestroyed(target.token)
    }

    /// Destroys the port now; the same as letting the right go out of scope.
    public consuming func destroy() {}

    /// Lends the descriptor that polls readable exactly while a message
    /// waits, for another event loop to watch. Do not read it or close it.
    /// - Throws: ``PortError/Code/resourceShortage`` if no descriptor can be made.
    public func withReadinessDescriptor<Result>(_ body: (CInt) throws -> Result) throws -> Result {
        try body(core.readinessDescriptor())
    }
}
