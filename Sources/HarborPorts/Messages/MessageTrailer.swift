// Harbor — what the runtime, not the sender, says about a message.

/// Facts about a received message that the runtime fills in: the sender can
/// neither set nor forge them (Mach's `mach_msg_audit_trailer_t`).
public struct MessageTrailer: Hashable, Sendable {
    /// The receiving port's count of messages received, this one included
    /// (Mach's `msgh_seqno`): 1 for the first message a port hands out.
    public internal(set) var sequenceNumber: UInt64
    /// The sending process, as the kernel reports it: `SCM_CREDENTIALS` for a
    /// message from another process, the process's own ids otherwise.
    public internal(set) var sender: ProcessIdentity
    /// The port the message was received on (useful after a port-set receive).
    public internal(set) var port: PortName?
    /// True for notifications the runtime generated (no-senders, dead-name,
    /// send-once, port-destroyed); no sender can set it.
    public internal(set) var isNotification: Bool
    /// Non-nil when the message was queued on a port whose receive right
    /// then moved here from another process: the kernel-verified identity
    /// of that process, which vouches for `sender` (its own kernel's word,
    /// or what its own predecessor vouched for). `sender` is then that
    /// process's claim, not something this process's kernel checked; trust
    /// it as far as you trust the relaying process. Nil when `sender` comes
    /// straight from the kernel. Mach keeps audit trailers through moves in
    /// the kernel; across Linux processes the previous holder must vouch.
    public internal(set) var relayedBy: ProcessIdentity?

    package init(sender: ProcessIdentity, isNotification: Bool = false) {
        self.sequenceNumber = 0
        self.sender = sender
        self.port = nil
        self.isNotification = isNotification
        self.relayedBy = nil
    }
}
