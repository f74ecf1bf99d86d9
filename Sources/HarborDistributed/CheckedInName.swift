// HarborDistributed — a harbord name checked in for a local actor.
import HarborPorts

/// A name this system checked in with harbord for a local actor: the
/// name's port (its receive right, which harbord handed over with the
/// messages that waited for it) and the actor's own port, whose actor the
/// calls arriving at the name's port go to.
struct CheckedInName: Sendable {
    /// The name's port, in the system's port set; dropping the last box
    /// destroys it, and harbord gives the name a new port to wait on.
    let port: PortBox
    /// The actor's own port: the key of its `HostedActor` entry.
    let actor: PortName
}
