// HarborDistributed — what the caller learned about a remote actor's port.

/// A remote actor's port as a caller's system knows it after a first call
/// (D08): the process that answered, whose ``ReplyLink`` later calls use,
/// and whether that process has been handed the link's reply port on this
/// actor port (a call answered there, so the calls after it on the same
/// port, which arrive after it, find the right kept).
struct RemoteActorRoute: Sendable {
    /// The serving process.
    let pid: Int32
    /// Whether an ``ActorWire/introducingCall`` on this port was answered.
    var introduced = false
}
