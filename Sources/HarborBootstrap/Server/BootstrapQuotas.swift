// Harbor — what one uid may make the name server hold, and its descriptor reserve.
import HarborPorts
import HarborSystem

/// The per-uid limits of the name server (Docs/harbord.md, "Limits").
///
/// Everything a process can make the server hold is charged to the uid the
/// kernel reports for it and bounded here; a request over a limit gets
/// ``BootstrapError/Code/overQuota`` and changes nothing, other uids are
/// unaffected, and all of it is released when the processes leave.
///
/// On top of the fixed limits, descriptors are shared: ``descriptorReserve``
/// stay free for the server itself, and what is left for uids is cut into
/// 18 shares (`DescriptorShares`): each uid may hold one; all uids but root
/// and the server's own uid at most 16 together, so root is never refused
/// for lack of descriptors within its share, and any other uid is refused
/// only over its own share or when 15 other uids each hold theirs.
public struct BootstrapQuotas: Sendable, Hashable {
    /// Names one uid may have checked in (without a declaration) or registered.
    public var namesPerUser = 16_384
    /// Connections one uid's processes may hold to the server (each
    /// `BootstrapClient`, each bootstrap right obtained by connecting), and
    /// reply rights they may have it keep (one per `BootstrapClient`).
    public var clientsPerUser = 2_048
    /// Sessions (processes holding names) one uid may have; each is one
    /// right the server holds.
    public var sessionsPerUser = 1_024
    /// Messages from one uid that may wait for services not checked in yet.
    public var pendingPerUser = 1_024
    /// Descriptors kept free for the server's own work; nil: 1/16 of its
    /// limit, at least 64.
    public var descriptorReserve: Int?

    /// The defaults above.
    public init() {}

    /// The most messages a declared name keeps waiting, from all uids (a port's largest queue).
    public static let pendingPerName = 1_024
    /// The most messages a declared name keeps waiting from one uid: an
    /// eighth of ``pendingPerName``, so no uid fills a name's queue, and a
    /// uid's message is refused there only over its own 128 (or its
    /// ``pendingPerUser``), or when eight uids hold 128 each.
    public static let pendingPerNamePerUser = pendingPerName / 8
}

/// Descriptors: the process's limit and what the server keeps for itself
/// (the rest is shared by `DescriptorShares`). Confined to the server loop's thread.
struct DescriptorBudget {
    /// `RLIMIT_NOFILE`'s soft limit (raised to the hard limit at start).
    let limit: Int
    /// Kept free for the server itself.
    let reserve: Int
    /// Open when the server started (stdio, the listener, the journal...).
    let baseline: Int

    init(quotas: BootstrapQuotas) {
        // Take all the kernel allows this process: the limits above bound each uid.
        limit = FileSystem.raiseDescriptorLimit() ?? 1024
        reserve = quotas.descriptorReserve ?? max(64, limit / 16)
        baseline = Self.openDescriptors()
    }

    /// What all uids together may hold, after the reserve and what the server
    /// holds for itself (`serverOwn`: its ports for waiting names, say).
    func available(serverOwn: Int) -> Int { max(0, limit - reserve - baseline - serverOwn) }

    /// Descriptors open now (a directory read of /proc/self/fd).
    static func openDescriptors() -> Int {
        guard let entries = FileSystem.entries(of: "/proc/self/fd") else { return 0 }
        return max(0, entries.count - 1)  // less the directory's own descriptor
    }
}

/// What one uid holds in the server. Confined to the server loop's thread.
struct UserCharges {
    var names = 0
    var sessions = 0
    var pending = 0
    var pendingDescriptors = 0
    /// Names whose port the server holds a send right to (two descriptors each).
    var heldRights = 0
    /// Reply rights its processes registered (`ReplyRegistrations`; two descriptors each).
    var replyRights = 0
}
