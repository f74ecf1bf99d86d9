// HarborXPC — declarative requirements on a peer's kernel-verified identity.
import Glibc  // types only: uid_t, gid_t
import HarborSystem

/// A requirement a peer must meet, checked on the kernel's word about each
/// message's sender (`trailer.sender`: uid, gid, pid; `Docs/Security.md`),
/// XPC's `XPCPeerRequirement`.
///
/// Darwin's requirements name code signatures (team, entitlement); Linux has
/// none, so Harbor's name the user and group the kernel reports:
///
/// ```swift
/// let listener = try XPCListener(service: "com.example.clock",
///                                requirement: .isFromSameUser()) { request in
///     request.accept { message in … }
/// }
/// ```
public struct XPCPeerRequirement: Hashable, Sendable, CustomStringConvertible {
    enum Rule: Hashable, Sendable {
        case uid(uid_t)
        case gid(gid_t)
        case anyOf([Rule])
        case allOf([Rule])
    }

    let rule: Rule

    /// The peer runs as this process's effective user.
    public static func isFromSameUser() -> XPCPeerRequirement {
        XPCPeerRequirement(rule: .uid(ProcessIdentity.current.uid))
    }

    /// The peer runs as `uid`.
    public static func hasUserID(_ uid: uid_t) -> XPCPeerRequirement { XPCPeerRequirement(rule: .uid(uid)) }

    /// The peer's effective group is `gid`.
    public static func hasGroupID(_ gid: gid_t) -> XPCPeerRequirement { XPCPeerRequirement(rule: .gid(gid)) }

    /// The peer runs as root (uid 0): Darwin's `isPlatformCode()` has no
    /// Linux meaning; a system service is what root runs.
    public static func isRoot() -> XPCPeerRequirement { XPCPeerRequirement(rule: .uid(0)) }

    /// The peer meets at least one of `requirements`.
    public static func anyOf(_ requirements: [XPCPeerRequirement]) -> XPCPeerRequirement {
        XPCPeerRequirement(rule: .anyOf(requirements.map(\.rule)))
    }

    /// The peer meets every one of `requirements`.
    public static func allOf(_ requirements: [XPCPeerRequirement]) -> XPCPeerRequirement {
        XPCPeerRequirement(rule: .allOf(requirements.map(\.rule)))
    }

    /// Whether `peer` (a kernel-verified identity) meets the requirement.
    public func isSatisfied(by peer: ProcessIdentity) -> Bool { Self.check(rule, peer) }

    private static func check(_ rule: Rule, _ peer: ProcessIdentity) -> Bool {
        switch rule {
        case .uid(let uid): peer.uid == uid
        case .gid(let gid): peer.gid == gid
        case .anyOf(let rules): rules.contains { check($0, peer) }
        case .allOf(let rules): rules.allSatisfy { check($0, peer) }
        }
    }

    /// The requirement, for logs and errors.
    public var description: String { Self.describe(rule) }

    private static func describe(_ rule: Rule) -> String {
        switch rule {
        case .uid(let uid): "uid \(uid)"
        case .gid(let gid): "gid \(gid)"
        case .anyOf(let rules): "any of (" + rules.map(describe).joined(separator: ", ") + ")"
        case .allOf(let rules): "all of (" + rules.map(describe).joined(separator: ", ") + ")"
        }
    }
}
