// HarborDistributed — what a system's lock guards.
import HarborBootstrap
import HarborCoding
import HarborPorts

/// A ``HarborActorSystem``'s tables, under its lock.
struct SystemState: Sendable {
    /// The actors this system hosts, by port.
    var hosted: [PortName: HostedActor] = [:]
    /// Names checked in for local actors, by name.
    var checkedIn: [String: CheckedInName] = [:]
    /// The actor's own port for each checked-in name's port: calls
    /// arriving at the name's port go to that actor.
    var aliases: [PortName: PortName] = [:]
    /// Calls waiting for an answer, by reply port.
    var pending: [PortName: PendingCall] = [:]
    /// Error types rethrown as themselves, by mangled name.
    var errorTypes: [String: ErrorRebuilder] = [:]
    /// The name server client, once needed.
    var bootstrap: BootstrapClient?
    /// Set by `shutdown()`.
    var stopped = false
}
