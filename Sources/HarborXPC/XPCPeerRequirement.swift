// HarborXPC — declarative requirements on a peer's kernel-verified identity.
import Glibc  // types only: uid_t, gid_t
import HarborPorts
import HarborSystem

/// A requirement a peer must meet, checked on the kernel's word about each
/// message's sender (`trailer.sender`: uid, gid, pid; `Docs/Security.md`),
/// XPC's `XPCPeerRequirement`.
///
/// Darwin's requirements name code signatures (team, entitlement); Linux has
/// none, so Harbor's name the user and group the kernel reports, and the
/// cgroup or systemd unit the sender runs in:
///
/// ```swift
/// let listener = try XPCListener(service: "com.example.clock",
///                                requirement: .isFromSameUser()) { request in
///     request.accept { message in … }
/// }
/// let admin = try XPCListener(service: "com.example.admin",
///                             requirement: .allOf([.isRoot(), .isInSystemdUnit("backup.service")])) { … }
/// ```
public struct XPCPeerRequirement: Hashable, Sendable, CustomStringConvertible {
    enum Rule: Hashable, Sendable {
        case uid(uid_t)
        case gid(gid_t)
        case cgroup(String)
        case unit(String)
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

    /// The peer runs in the cgroup v2 `path` or one beneath it
    /// (`/system.slice/backup.service` admits `/system.slice/backup.service`
    /// and `/system.slice/backup.service/worker`, not
    /// `/system.slice/backup.service2`); paths as `/proc/PID/cgroup` shows
    /// them, relative to this process's cgroup namespace. A trailing `/` is
    /// ignored; `/` admits every process.
    ///
    /// Read for each message from `/proc/PID/cgroup` of its sender, through
    /// a pidfd checked after the read. On a listener, the pidfd is the one
    /// the kernel took for the sender when it sent the message (SCM_PIDFD,
    /// Linux 6.5 and later): a sender that ended before its message was
    /// read is refused, whoever has its pid by then. Elsewhere (``check(_:)``
    /// given a bare identity, or a kernel without it) the pidfd is opened
    /// on the pid when the check runs, so only a pid reused during the read
    /// is refused (`Docs/Security.md`, "Sender identity").
    /// A sender whose cgroup cannot be read (it ended, no cgroup v2) is
    /// refused with ``XPCRichError/Code/peerIdentityUnavailable``.
    public static func isInCgroup(_ path: String) -> XPCPeerRequirement {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return XPCPeerRequirement(rule: .cgroup(path))
    }

    /// The peer runs in the systemd unit `unit` (`backup.service`,
    /// `session-3.scope`): the first `.service` or `.scope` component of
    /// its cgroup path, read as ``isInCgroup(_:)`` reads it. The first, not
    /// the last: below a unit that delegates its cgroup (`Delegate=yes`,
    /// and every user's manager, `user@UID.service`) the unit's processes
    /// name the cgroups, so a deeper name may be anyone's choice. A user's
    /// own units are therefore all `user@UID.service`: require their full
    /// path with ``isInCgroup(_:)``.
    public static func isInSystemdUnit(_ unit: String) -> XPCPeerRequirement {
        XPCPeerRequirement(rule: .unit(unit))
    }

    /// The peer meets at least one of `requirements`.
    public static func anyOf(_ requirements: [XPCPeerRequirement]) -> XPCPeerRequirement {
        XPCPeerRequirement(rule: .anyOf(requirements.map(\.rule)))
    }

    /// The peer meets every one of `requirements`.
    public static func allOf(_ requirements: [XPCPeerRequirement]) -> XPCPeerRequirement {
        XPCPeerRequirement(rule: .allOf(requirements.map(\.rule)))
    }

    /// Whether `peer` (a kernel-verified identity) meets the requirement;
    /// false also when a fact it needs cannot be learnt (``check(_:)`` says which).
    public func isSatisfied(by peer: ProcessIdentity) -> Bool { (try? check(peer)) != nil }

    /// Checks `peer` (a kernel-verified identity) against the requirement.
    /// - Throws: ``XPCRichError/Code/peerRequirementNotMet`` if it does not
    ///   meet it; ``XPCRichError/Code/peerIdentityUnavailable`` if a fact
    ///   the requirement needs (the peer's cgroup) cannot be learnt and
    ///   what is known does not decide.
    public func check(_ peer: ProcessIdentity) throws(XPCRichError) {
        try check(PeerFacts(peer))
    }

    /// Checks the sender of the message `trailer` describes, its cgroup as
    /// read at receipt when the port read it (``MessageTrailer/senderCgroup``),
    /// by pid otherwise.
    func check(_ trailer: MessageTrailer) throws(XPCRichError) {
        try check(PeerFacts(trailer.sender, cgroup: trailer.senderCgroup))
    }

    /// Whether the requirement names a cgroup or a unit: a listener's port
    /// then reads each sender's cgroup at receipt.
    var needsCgroup: Bool { Self.needsCgroup(rule) }

    private static func needsCgroup(_ rule: Rule) -> Bool {
        switch rule {
        case .uid, .gid: false
        case .cgroup, .unit: true
        case .anyOf(let rules), .allOf(let rules): rules.contains(where: needsCgroup)
        }
    }

    private func check(_ facts: consuming PeerFacts) throws(XPCRichError) {
        var facts = facts
        let peer = facts.peer
        switch Self.verdict(rule, &facts) {
        case .met: return
        case .notMet: throw XPCRichError(.peerRequirementNotMet, "\(peer) does not meet the requirement \(self)")
        case .unknown(let why):
            throw XPCRichError(.peerIdentityUnavailable, "the requirement \(self) needs what cannot be learnt of \(peer): \(why)")
        }
    }

    /// Three-valued: an `anyOf` is met by one member met, an `allOf` fails
    /// by one member not met, whatever the others could not learn.
    private enum Verdict {
        case met, notMet, unknown(String)
    }

    /// What is learnt about one peer, each fact at most once per check.
    private struct PeerFacts {
        let peer: ProcessIdentity
        private var cgroup: Result<String, SystemError>?

        /// `cgroup`: the peer's cgroup as already read, if it was.
        init(_ peer: ProcessIdentity, cgroup: Result<String, SystemError>? = nil) {
            self.peer = peer
            self.cgroup = cgroup
        }

        mutating func cgroupPath() -> Result<String, SystemError> {
            if let cgroup { return cgroup }
            let read = Result { () throws(SystemError) -> String in try ProcessCgroup.path(of: peer.pid) }
            cgroup = read
            return read
        }
    }

    private static func verdict(_ rule: Rule, _ facts: inout PeerFacts) -> Verdict {
        switch rule {
        case .uid(let uid): return facts.peer.uid == uid ? .met : .notMet
        case .gid(let gid): return facts.peer.gid == gid ? .met : .notMet
        case .cgroup(let required):
            switch facts.cgroupPath() {
            case .failure(let error): return .unknown("its cgroup: \(error)")
            case .success(let path):
                return required == "/" || path == required || path.hasPrefix(required + "/") ? .met : .notMet
            }
        case .unit(let unit):
            switch facts.cgroupPath() {
            case .failure(let error): return .unknown("its cgroup: \(error)")
            case .success(let path): return ProcessCgroup.unit(ofPath: path) == unit ? .met : .notMet
            }
        case .anyOf(let rules):
            var unknown: String?
            for rule in rules {
                switch verdict(rule, &facts) {
                case .met: return .met
                case .notMet: continue
                case .unknown(let why): unknown = unknown ?? why
                }
            }
            return unknown.map { .unknown($0) } ?? .notMet
        case .allOf(let rules):
            var unknown: String?
            for rule in rules {
                switch verdict(rule, &facts) {
                case .met: continue
                case .notMet: return .notMet
                case .unknown(let why): unknown = unknown ?? why
                }
            }
            return unknown.map { .unknown($0) } ?? .met
        }
    }

    /// The requirement, for logs and errors.
    public var description: String { Self.describe(rule) }

    private static func describe(_ rule: Rule) -> String {
        switch rule {
        case .uid(let uid): "uid \(uid)"
        case .gid(let gid): "gid \(gid)"
        case .cgroup(let path): "cgroup \(path)"
        case .unit(let unit): "unit \(unit)"
        case .anyOf(let rules): "any of (" + rules.map(describe).joined(separator: ", ") + ")"
        case .allOf(let rules): "all of (" + rules.map(describe).joined(separator: ", ") + ")"
        }
    }
}
