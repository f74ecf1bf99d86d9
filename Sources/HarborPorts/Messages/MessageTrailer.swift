// Harbor — what the runtime, not the sender, says about a message.
import HarborSystem

/// Facts about a received message that the runtime fills in: the sender can
/// neither set nor forge them (Mach's `mach_msg_audit_trailer_t`).
public struct MessageTrailer: Hashable, Sendable {
    /// The receiving port's count of messages received, this one included
    /// (Mach's `msgh_seqno`): 1 for the first message a port hands out.
    public internal(set) var sequenceNumber: UInt64 = 0
    /// The process a service may hold responsible for the message; base
    /// decisions on this field.
    ///
    /// For a message a process sent here itself, the process the kernel
    /// says delivered it: `SCM_CREDENTIALS` of the packet for a message from
    /// another process, this process's own ids otherwise. For a message that
    /// was queued on a port whose receive right then moved here (``relayedBy``
    /// is set), the relay that delivered it, unless the relay is the name
    /// server this process trusts (``RelayTrust``, checked by the kernel's
    /// word on the relay, never by a claim): then the name server's word on
    /// who sent the message to it, as launchd keeps the kernel's audit
    /// trailer with a message queued before check-in (P11).
    public internal(set) var sender: ProcessIdentity
    /// The port the message was received on (useful after a port-set receive).
    public internal(set) var port: PortName? = nil
    /// True for notifications the runtime generated (no-senders, dead-name,
    /// send-once, port-destroyed); no sender can set it.
    public internal(set) var isNotification: Bool
    /// The process that delivered the message here when it was relayed: it
    /// was queued on a port whose receive right then moved here from this
    /// process, which handed it over with the queue. Nil for a message its
    /// sender delivered itself. Kernel-verified (`SCM_CREDENTIALS` of the
    /// packet that moved the port).
    public internal(set) var relayedBy: ProcessIdentity? = nil
    /// Who ``relayedBy`` says sent the message to it: set only for a relayed
    /// message. A claim no kernel here checked (Mach's kernel moves audit
    /// trailers with the port; across Linux processes only the relay can
    /// tell, and it may lie): ``sender`` is this claim only when the relay is
    /// the trusted name server, and the relay itself otherwise, since it held
    /// the receive right and so could have read, dropped or invented any of
    /// those messages anyway.
    public internal(set) var claimedOriginalSender: ProcessIdentity? = nil

    /// The cgroup v2 path of ``sender``, read when the message was received
    /// through a pidfd the kernel took for it at send time (SCM_PIDFD), on a
    /// port that asked (``ReceiveRight/readSenderCgroups()``); the error
    /// when it could not be read (`ESRCH`, or the kernel's error in place
    /// of the pidfd: the sender had ended by then).
    /// Nil when nothing was read: another port, a kernel without
    /// `SO_PASSPIDFD`, a message from this process, or one whose ``sender``
    /// is not the process that delivered it (a trusted relay's claim).
    package var senderCgroup: Result<String, SystemError>? = nil

    /// Whether the message was relayed (``relayedBy`` is set).
    public var isRelayed: Bool { relayedBy != nil }

    /// Whether it is field for field what `init(sender: .current)` makes,
    /// the trailer of a message this process sends: nothing stamped on
    /// receipt, no relay, no claim, no cgroup.
    package var isUnstampedOwn: Bool {
        sequenceNumber == 0 && port == nil && !isNotification && relayedBy == nil && claimedOriginalSender == nil
            && senderCgroup == nil && sender == .current
    }

    package init(sender: ProcessIdentity, isNotification: Bool = false) {
        self.sender = sender
        self.isNotification = isNotification
    }

    /// The trailer of a queued message that `relay` delivered inside a
    /// moved receive right, claiming `original` sent it: ``sender`` is the
    /// claim when `relay` is trusted (``RelayTrust``), the relay otherwise.
    package init(relayedBy relay: ProcessIdentity, claiming original: ProcessIdentity) {
        self.init(sender: RelayTrust.trusts(relay) ? original : relay)
        self.relayedBy = relay
        self.claimedOriginalSender = original
    }
}
