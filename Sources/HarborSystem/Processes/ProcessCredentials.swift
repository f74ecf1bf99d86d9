// Harbor — who the process runs as: its user and group ids, and giving up root.
import CHarborLinux
import Glibc

/// The calling process's user and group ids, and the calls that change
/// them (to give up root after start-up).
///
/// glibc applies `setgroups`, `setgid` and `setuid` to every thread of the
/// process (POSIX semantics), not only the calling one, so a process that
/// already runs threads changes as a whole.
package enum ProcessCredentials {
    /// Real, effective and saved user ids. C: `getresuid`.
    package static var userIDs: (real: uid_t, effective: uid_t, saved: uid_t) {
        var real: uid_t = 0
        var effective: uid_t = 0
        var saved: uid_t = 0
        _ = charbor_getresuid(&real, &effective, &saved)
        return (real, effective, saved)
    }

    /// Real, effective and saved group ids. C: `getresgid`.
    package static var groupIDs: (real: gid_t, effective: gid_t, saved: gid_t) {
        var real: gid_t = 0
        var effective: gid_t = 0
        var saved: gid_t = 0
        _ = charbor_getresgid(&real, &effective, &saved)
        return (real, effective, saved)
    }

    /// The supplementary group ids. C: `getgroups`.
    package static var supplementaryGroups: [gid_t] {
        let count = getgroups(0, nil)
        guard count > 0 else { return [] }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let filled = getgroups(count, &groups)
        return filled > 0 ? Array(groups.prefix(Int(filled))) : []
    }

    /// Replaces the supplementary groups with `groups`. C: `setgroups`.
    /// - Throws: EPERM without CAP_SETGID.
    package static func setSupplementaryGroups(_ groups: [gid_t]) throws(SystemError) {
        _ = try systemCall("setgroups") { setgroups(groups.count, groups) }
    }

    /// Sets the real, effective and saved group ids to `gid` (with
    /// CAP_SETGID). C: `setgid`.
    package static func setGroupID(_ gid: gid_t) throws(SystemError) {
        _ = try systemCall("setgid") { setgid(gid) }
    }

    /// Sets the real, effective and saved user ids to `uid` (as root: for
    /// good, the capabilities go too). C: `setuid`.
    package static func setUserID(_ uid: uid_t) throws(SystemError) {
        _ = try systemCall("setuid") { setuid(uid) }
        ProcessIdentity.forgetCurrent()
    }

    /// Whether this process could make itself root again (a `setuid(0)`
    /// that succeeds; it is undone at once). After a real drop it fails
    /// with EPERM. C: `seteuid`.
    package static var canRegainRoot: Bool {
        let before = geteuid()
        guard before != 0 else { return true }
        if seteuid(0) == 0 {
            _ = seteuid(before)
            return true
        }
        return false
    }

    /// Hands `path` to `uid` and `gid`, not following a link at its end. C: `lchown`.
    package static func changeOwner(_ path: String, uid: uid_t, gid: gid_t) throws(SystemError) {
        _ = try systemCall("lchown") { lchown(path, uid, gid) }
    }
}
