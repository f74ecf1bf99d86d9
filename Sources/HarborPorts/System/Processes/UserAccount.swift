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
}
