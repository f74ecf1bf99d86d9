// Harbor — the reply rights clients registered once, so their requests carry none.
import Glibc  // types only: pid_t, uid_t
import HarborPorts

/// The reply rights the server keeps for clients (`registerReplies`): a
/// client registers the send right to its reply port once, and its later
/// requests name the registration's handle instead of carrying a right.
/// A request then passes no descriptors at all, and the server neither
/// examines nor closes any: the four system calls a carried right costs the
/// server (`fstat`, `SO_PEERCRED`, two `close`) go, and both sides take the
/// plain-message path.
///
/// Sound because a handle is honoured only for the process the kernel says
/// sent the request (`trailer.sender`) when that is the process the right
/// leads to: a handle another process learns or guesses gets it nothing (the
/// request is dropped), and so does one whose registration's port died (the
/// server's dead-name notification removes it before a pid can be reused).
/// One registration per port: registering the same port again returns its
/// handle. Handles are never reused.
///
/// **Cost:** the right's two descriptors, charged to the uid (at most
/// ``BootstrapQuotas/clientsPerUser`` registrations a uid).
/// **Thread safety:** confined to the server loop's thread.
struct ReplyRegistrations {
    /// One kept reply right.
    struct Registration {
        let right: SendRight
        /// The process the right leads to, which alone may use it.
        let pid: pid_t
        let uid: uid_t
    }

    private var byHandle: [UInt64: Registration] = [:]
    private var handleByPort: [PortName: UInt64] = [:]
    private var lastHandle: UInt64 = 0

    /// The registration of `handle` if `sender` may use it: the process the
    /// right leads to (whatever its uid is now: replies go to that process).
    func right(_ handle: UInt64, for sender: ProcessIdentity) -> SendRight? {
        guard let found = byHandle[handle], found.pid == sender.pid else { return nil }
        return found.right
    }

    /// The handle already given for `right`'s port, if any.
    func handle(of right: SendRight) -> UInt64? { handleByPort[right.name] }

    /// Keeps `right` for `sender`; its new handle.
    mutating func register(_ right: SendRight, for sender: ProcessIdentity) -> UInt64 {
        lastHandle += 1
        byHandle[lastHandle] = Registration(right: right, pid: sender.pid, uid: sender.uid)
        handleByPort[right.name] = lastHandle
        return lastHandle
    }

    /// Forgets the registration of a port that died; the uid it was charged to.
    mutating func remove(port: PortName) -> uid_t? {
        guard let handle = handleByPort.removeValue(forKey: port) else { return nil }
        return byHandle.removeValue(forKey: handle)?.uid
    }

    /// The ports registered now.
    var ports: [PortName] { Array(handleByPort.keys) }

    /// Forgets everything (the server stops).
    mutating func removeAll() {
        byHandle = [:]
        handleByPort = [:]
    }
}
