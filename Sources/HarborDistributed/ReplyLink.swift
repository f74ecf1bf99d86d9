// HarborDistributed — the caller's side of calls by number to one process.
import HarborPorts

/// A caller's link to one serving process (D08): the reply port every call
/// by number to that process is answered at. The serving process gets a
/// send right to it once per actor port, in an ``ActorWire/introducingCall``;
/// an answer arriving here counts only if that process sent it and its
/// number is a call still waiting on this link.
final class ReplyLink: Sendable {
    /// The serving process, as its answers' kernel-verified sender says.
    let pid: Int32
    /// The reply port, in the system's port set; it goes with the link.
    let port: PortBox

    init(pid: Int32) {
        self.pid = pid
        port = PortBox(ReceiveRight())
    }

    /// The link id the calls carry: the reply port's name, unique in this process.
    var id: UInt64 { port.name.rawValue }
}
