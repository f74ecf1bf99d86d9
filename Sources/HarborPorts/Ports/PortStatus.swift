// Harbor — a snapshot of a port's counters.
import HarborSystem

/// A port's counters at one instant (Mach: `mach_port_status_t`).
public struct PortStatus: Hashable, Sendable {
    /// The port.
    public let name: PortName
    /// Messages the queue holds before senders wait.
    public let queueLimit: Int
    /// Messages waiting now, send-once ones included.
    public let queuedMessages: Int
    /// Live send rights (Mach: `mps_srights`, as a count).
    public let sendRights: Int
    /// Live send-once rights (Mach: `mps_sorights`).
    public let sendOnceRights: Int
    /// Send rights ever made (Mach: `mps_mscount`).
    public let madeSendRights: UInt64
    /// Messages received so far (Mach: `mps_seqno`).
    public let sequenceNumber: UInt64
    /// Whether the receive right is gone.
    public let isDead: Bool
    /// Whether the port belongs to a port set (Mach: `mps_pset != 0`).
    public let isInSet: Bool
}
