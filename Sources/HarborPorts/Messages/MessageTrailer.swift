// Harbor — what the runtime, not the sender, says about a message.

/// Facts about a received message that the runtime fills in: the sender can
/// neither set nor forge them (Mach's `mach_msg_audit_trailer_t`).
public struct MessageTrailer: Hashable, Sendable {
    /// The receiving port's count of messages received, this one included
    /// (Mach's `msgh_seqno`): 1 for the first message a port hands out.
    public internal(set) var sequenceNumber: UInt64
    /// The process that sent the message here, as the kernel reports it:
    /// `SCM_CREDENTIALS` of the packet that delivered it for a message from
    /// another process, the process's own ids otherwise. Never a claim: for
    /// a message that was queued on a port whose receive right then moved
    /// here, this is the process the port came from, which delivered it
    /// (P11). Base decisions on this field.
    public internal(set) var sender: ProcessIdentity
    /// The port the message was received on (useful after a port-set receive).
    public internal(set) var port: PortName?
    /// True for notifications the runtime generated (no-senders, dead-name,
    /// send-once, port-destroyed); no sender can set it.
    public internal(set) var isNotification: Bool
    /// Who `sender` says sent the message to it: set only for a message
    /// that was queued on a port whose receive right then moved here from
    /// `sender`'s process, which relays it. A claim no kernel here checked
    /// (Mach's kernel moves audit trailers with the port; across Linux
    /// processes only the relay can tell, and it may lie). Show it, log it,
    /// never grant anything on it: `sender` held the receive right, and so
    /// could have read, dropped or invented any of those messages anyway.
    public internal(set) var claimedOriginalSender: ProcessIdentity?

    package init(sender: ProcessIdentity, isNotification: Bool = false) {
        self.sequenceNumber = 0
        self.sender = sender
        self.port = nil
        self.isNotification = isNotification
        self.claimedOriginalSender = nil
    }
}
