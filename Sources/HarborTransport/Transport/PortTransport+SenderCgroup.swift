// Harbor — a port's transport, receiving: the sender's cgroup, read at
// receipt through the pidfd the kernel attached to the packet.
//
// On a port that asked (`readSenderCgroups()`), each connection has
// SO_PASSPIDFD set, and the kernel attaches to every packet a pidfd on the
// process that sent it, taken at send time (SCM_PIDFD). The cgroup is read
// here, while the pump holds the packet, and the pidfd closes with the
// packet as soon as the pump is done with it, on every path (a refused
// packet, a fragment, a port that never asked): no descriptor rides in a
// queued message, so none is charged to a sender or held by a message no
// one receives. A path is a few bytes; a pidfd would be one of the
// receiver's descriptors per queued message.
import Synchronization
import HarborSystem
import HarborPorts

extension PortTransport {
    /// Records in `content`'s trailer the cgroup of the process that sent
    /// `packet`, read through its SCM_PIDFD, when this port reads senders'
    /// cgroups and the trailer's sender is that process (not a trusted
    /// relay's claim). Nothing otherwise.
    func recordSenderCgroup(of packet: borrowing ReceivedPacket, in content: inout MessageContent) {
        guard let process = packet.senderProcess, readsSenderCgroups.load(ordering: .relaxed),
              let sender = packet.sender, content.trailer.sender == sender else { return }
        content.trailer.senderCgroup = Result { () throws(SystemError) -> String in
            try ProcessCgroup.path(of: sender.pid, through: process.get().rawValue)
        }
    }
}
