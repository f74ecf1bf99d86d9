// HarborDistributed — a requirement on the identity of an actor system's callers.
import Glibc  // types only: uid_t, gid_t, pid_t
import HarborSystem

/// A requirement every caller of a ``HarborActorSystem``'s actors must
/// meet (D12), checked on the kernel's word about each call's sender
/// (`trailer.sender`: uid, gid, pid; `Docs/Security.md`), as XPC's peer
/// requirements are (`XPCPeerRequirement`, `Docs/XPC.md`).
///
/// Darwin's requirements name code signatures; Linux has none, so these
/// name the user, group and process the kernel reports:
///
/// ```swift
/// let system = try HarborActorSystem(callerRequirement: .isFromSameUser())
/// ```
///
/// A call from a process that does not meet it is answered
/// ``HarborActorSystemError/Code/callerRefused`` and does not run.
///
/// **Thread safety:** a value; any thread.
public struct HarborCallerRequirement: Hashable, Sendable, CustomStringConvertible {
    enum Rule: Hashable, Sendable {
        case uid(uid_t)
        case gid(gid_t)
        case pid(pid_t)
        case anyOf([Rule])
        case allOf([Rule])
    }

    let rule: Rule

    /// The caller runs as this process's effective user.
    public static func isFromSameUser() -> HarborCallerRequirement {
        HarborCallerRequirement(rule: .uid(ProcessIdentity.current.uid))
    }

    /// The caller runs as `uid`.
    public static func hasUserID(_ uid: uid_t) -> HarborCallerRequirement { HarborCallerRequirement(rule: .uid(uid)) }

    /// The caller's effective group is `gid`.
    public static func hasGroupID(_ gid: gid_t) -> HarborCallerRequirement { HarborCallerRequirement(rule: .gid(gid)) }

    /// The caller is the process `pid` (a process id is reused once its
    /// process is gone: name a process whose lifetime covers the system's).
    public static func hasProcessID(_ pid: pid_t) -> HarborCallerRequirement { HarborCallerRequirement(rule: .pid(pid)) }

    /// The caller runs as root (uid 0).
    public static func isRoot() -> HarborCallerRequirement { HarborCallerRequirement(rule: .uid(0)) }

    /// The caller meets at least one of `requirements`.
    public static func anyOf(_ requirements: [HarborCallerRequirement]) -> HarborCallerRequirement {
        HarborCallerRequirement(rule: .anyOf(requirements.map(\.rule)))
    }

    /// The caller meets every one of `requirements`.
    public static func allOf(_ requirements: [HarborCallerRequirement]) -> HarborCallerRequirement {
        HarborCallerRequirement(rule: .allOf(requirements.map(\.rule)))
    }

    /// Whether `caller` (a kernel-verified identity) meets the requirement.
    public func isSatisfied(by caller: ProcessIdentity) -> Bool { Self.check(rule, caller) }

    private static func check(_ rule: Rule, _ caller: ProcessIdentity) -> Bool {
        switch rule {
        case .uid(let uid): caller.uid == uid
        case .gid(let gid): caller.gid == gid
        case .pid(let pid): caller.pid == pid
        case .anyOf(let rules): rules.contains { check($0, caller) }
        case .allOf(let rules): rules.allSatisfy { check($0, caller) }
        }
    }

    /// The requirement, for logs and errors.
    public var description: String { Self.describe(rule) }

    private static func describe(_ rule: Rule) -> String {
        switch rule {
        case .uid(let uid): "uid \(uid)"
        case .gid(let gid): "gid \(gid)"
        case .pid(let pid): "pid \(pid)"
        case .anyOf(let rules): "any of (" + rules.map(describe).joined(separator: ", ") + ")"
        case .allOf(let rules): "all of (" + rules.map(describe).joined(separator: ", ") + ")"
        }
    }
}
