// Harbor — who this process is, as the kernel says.
import CHarborLinux
import Glibc
import Synchronization

/// A process's pid, uid and gid as the kernel reports them.
///
/// In a message trailer these come from the kernel: for a message from
/// another process, from `SCM_CREDENTIALS`; for one from this process, from
/// `getpid`/`geteuid`/`getegid`. Never from the message body.
public struct ProcessIdentity: Hashable, Sendable, CustomStringConvertible {
    /// Process id.
    public let pid: pid_t
    /// Effective user id.
    public let uid: uid_t
    /// Effective group id.
    public let gid: gid_t

    package init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }

    /// This process. Read from the kernel once, then cached; a fork handler
    /// clears the cache in the child so the child reports its own pid.
    package static var current: ProcessIdentity {
        let pid = cachedPid.load(ordering: .acquiring)
        if pid != 0 {
            return ProcessIdentity(pid: pid, uid: cachedUid.load(ordering: .relaxed),
                                   gid: cachedGid.load(ordering: .relaxed))
        }
        _ = forkHandlerInstalled
        let fresh = ProcessIdentity(pid: getpid(), uid: geteuid(), gid: getegid())
        cachedUid.store(fresh.uid, ordering: .relaxed)
        cachedGid.store(fresh.gid, ordering: .relaxed)
        cachedPid.store(fresh.pid, ordering: .releasing)
        return fresh
    }

    /// Drops the cached identity, so the next ``current`` reads the kernel
    /// again: after the process changed its uid or gid.
    package static func forgetCurrent() { cachedPid.store(0, ordering: .releasing) }

    // Atomics rather than a lock: the fork child handler must not touch a lock
    // another thread may have held at the moment of fork.
    private static let cachedPid = Atomic<Int32>(0)
    private static let cachedUid = Atomic<UInt32>(0)
    private static let cachedGid = Atomic<UInt32>(0)
    private static let forkHandlerInstalled: Bool = {
        pthread_atfork(nil, nil) { ProcessIdentity.cachedPid.store(0, ordering: .releasing) }
        return true
    }()
}
