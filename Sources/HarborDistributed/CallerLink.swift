// HarborDistributed — the serving side's send right to one caller's reply port.
import HarborPorts

/// A caller link this system serves (D08): the send right to the caller's
/// reply port that an ``ActorWire/introducingCall`` handed over, kept
/// until the port dies (a dead-name notification), charged to the caller's
/// uid (``HarborActorSystem/callerLinksPerUid``).
struct CallerLink: Sendable {
    /// The caller's reply port: every answer to a call by number of the link.
    let right: SendRight
    /// The uid charged for it.
    let uid: UInt32
}
