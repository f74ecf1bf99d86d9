// HarborDistributed — which caller link a call by number names.

/// A caller link's key on the serving side (D08): the calling process, as
/// the kernel says, and the link id the call carries (one process may run
/// several systems, each with its own reply port).
struct CallerKey: Hashable, Sendable {
    let pid: Int32
    let link: UInt64
}
