// Harbor — a user of the system, from the user database (/etc/passwd, NSS).
import CHarborLinux
import Glibc

/// A user account: its name, uid and primary gid.
package struct UserAccount: Sendable, Hashable, CustomStringConvertible {
    /// The login name.
    package let name: String
    /// Its user id.
    package let uid: uid_t
    /// Its primary group id.
    package let gid: gid_t

    package init(name: String, uid: uid_t, gid: gid_t) {
        self.name = name
        self.uid = uid
        self.gid = gid
    }

    /// The overflow user `nobody` (uid 65534 on Linux): shared by unrelated
    /// services, so never an identity worth trusting on its own.
    package static let overflowUID: uid_t = 65534

    package var description: String { "\(name) (uid \(uid), gid \(gid))" }

    /// Whether this is the shared overflow user rather than a dedicated one.
    package var isOverflow: Bool { uid == Self.overflowUID }

    /// The account named `name`, or nil if the user database has none (or
    /// cannot be read). C: `getpwnam_r`.
    package static func named(_ name: String) -> UserAccount? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let status = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return UserAccount(name: name, uid: entry.pw_uid, gid: entry.pw_gid)
    }

    /// Whether the user database has an account with `uid`. C: `getpwuid_r`.
    package static func exists(uid: uid_t) -> Bool {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        return getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0 && result != nil
    }

    /// A uid and gid of its own for a service with no account, as systemd's
    /// `DynamicUser=` picks one: the first of 61184–65519 the user database
    /// does not name (nil if all are taken). No other process runs as it
    /// unless someone chose it on purpose, so it shares nothing (the kernel's
    /// per-user limits, `/proc` access, signals) with `nobody`'s processes.
    package static func unnamed(for service: String) -> UserAccount? {
        for uid in uid_t(61184)...uid_t(65519) where !exists(uid: uid) {
            return UserAccount(name: "\(service) (uid \(uid), no account)", uid: uid, gid: gid_t(uid))
        }
        return nil
    }
}
