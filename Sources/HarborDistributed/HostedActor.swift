// HarborDistributed — an actor this system hosts, as its table holds it.
import Distributed

/// A local actor's entry: its port, the actor (weakly, and strongly while
/// some send right to the port exists or a name is checked in for it), and the prefix its functions'
/// target names start with.
struct HostedActor: Sendable {
    /// The actor's port; dropping the last box destroys it.
    let port: PortBox
    /// The actor, once `actorReady`; gone when nothing else holds it.
    weak var actor: (any DistributedActor)?
    /// The actor while some send right to its port exists (it was served
    /// or passed to another system), so remote references keep it alive.
    var strong: (any DistributedActor)?
    /// How many harbord names are checked in for the actor: while any is,
    /// it is held strongly whatever its own port's send rights.
    var checkedInNames = 0
    /// `$s` and the actor type's mangled name: every distributed function
    /// of the type has a target name that starts so.
    var targetPrefix: String?
}
