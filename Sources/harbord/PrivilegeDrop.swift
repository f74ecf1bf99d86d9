// Harbor — harbord gives up root once its socket is bound, so nothing it sends or relays passes for root.
import HarborPorts
import Logging
import HarborSystem

/// The user harbord runs as, and the switch to it (issue 21, "whoever
/// relays is seen"): services receive messages harbord relays, and one
/// checking `relayedBy.uid == 0` must never see harbord as root.
///
/// Started as root by hand (no service manager), harbord binds its socket,
/// then switches for good to `--user NAME` (default: the user `harbord` if
/// the user database has one, else a uid of its own that no account names,
/// as `DynamicUser=` picks; never `nobody`, whose other processes would share
/// its uid), in the order `setgroups`,
/// `setgid`, `setuid`, and checks that it took: real, effective and saved
/// ids all the user's, no other group, and `seteuid(0)` refused. Any
/// failure stops start-up. `--user root` keeps root on purpose.
///
/// Started by a service manager (systemd sets `INVOCATION_ID`,
/// `NOTIFY_SOCKET` or passes the socket), the manager chooses the user (the
/// shipped unit: `DynamicUser=yes`); `--user` still switches if given.
///
/// The socket's directory: harbord removes its socket file at stop, which
/// needs write permission there. A directory harbord made itself (the
/// default `/run/harbor`, when absent) is handed to a dedicated user before
/// the switch; never to `nobody`, whom other services share (they could
/// then replace the socket), and never a directory that was there before.
/// Where the user cannot write, the socket file stays after stop and the
/// next start replaces it (a stale socket: nobody listens on it).
struct PrivilegeDrop {
    /// The account to become.
    let account: UserAccount

    /// What to do at start-up: nil keeps the current user (with a line for
    /// the log saying why).
    /// - Parameters:
    ///   - user: `--user`, if given.
    ///   - managed: whether a service manager started harbord.
    /// - Throws: ``StartupError`` for an unknown user, or a switch that needs root.
    static func plan(user: String?, managed: Bool) throws(StartupError) -> (drop: PrivilegeDrop?, note: String?) {
        let euid = ProcessControl.effectiveUserID
        if user == "root" { return (nil, euid == 0 ? "running as root (--user root)" : nil) }
        if euid != 0 {
            guard let user else { return (nil, nil) }
            guard let account = UserAccount.named(user) else { throw StartupError("--user \(user): no such user") }
            if account.uid == euid { return (nil, nil) }
            throw StartupError("--user \(user): harbord runs as uid \(euid), not root, and cannot switch users")
        }
        if let user {
            guard let account = UserAccount.named(user) else { throw StartupError("--user \(user): no such user") }
            return (account.uid == 0 ? nil : PrivilegeDrop(account: account), nil)
        }
        if managed {
            return (nil, "running as root: started by a service manager, which chooses the user "
                + "(the shipped harbord.service uses DynamicUser=); --user NAME switches")
        }
        // Never nobody by default: its other processes would share harbord's
        // uid, and with it the kernel's per-user count of descriptors in
        // flight, which one of them could exhaust to stop harbord's replies.
        guard let account = UserAccount.named("harbord") ?? UserAccount.unnamed(for: "harbord") else {
            throw StartupError("started as root, with no user harbord and no free uid in 61184-65519: pass --user NAME")
        }
        return (PrivilegeDrop(account: account), nil)
    }

    /// Switches to ``account`` for good; the lines to log.
    /// - Parameter socketDirectory: the directory of the socket harbord
    ///   bound, if it made that directory itself (it may hand it over).
    /// - Throws: ``StartupError`` if any step fails or did not take.
    func perform(madeSocketDirectory socketDirectory: String?, socketPath: String?) throws(StartupError) -> [String] {
        var notes: [String] = []
        if let socketDirectory, !account.isOverflow {
            do {
                try ProcessCredentials.changeOwner(socketDirectory, uid: account.uid, gid: account.gid)
                notes.append("handed \(socketDirectory) (made at start-up) to \(account.name)")
            } catch {
                notes.append("cannot hand \(socketDirectory) to \(account.name): \(error)")
            }
        }
        do {
            try ProcessCredentials.setSupplementaryGroups([])
            try ProcessCredentials.setGroupID(account.gid)
            try ProcessCredentials.setUserID(account.uid)
        } catch {
            throw StartupError("cannot switch to user \(account): \(error)")
        }
        let users = ProcessCredentials.userIDs
        let groups = ProcessCredentials.groupIDs
        let extra = ProcessCredentials.supplementaryGroups.filter { $0 != account.gid }
        guard users == (account.uid, account.uid, account.uid), groups == (account.gid, account.gid, account.gid),
              extra.isEmpty, !ProcessCredentials.canRegainRoot else {
            throw StartupError("switching to user \(account) did not take: uids \(users), gids \(groups), "
                + "other groups \(extra), root \(ProcessCredentials.canRegainRoot ? "regainable" : "gone")")
        }
        notes.insert("running as \(account): gave up root after binding the socket", at: 0)
        if let socketPath, let slash = socketPath.lastIndex(of: "/") {
            let directory = slash == socketPath.startIndex ? "/" : String(socketPath[..<slash])
            if !FileSystem.isWritableDirectory(directory) {
                notes.append("\(account.name) cannot write \(directory): \(socketPath) stays after stop "
                    + "(the next start replaces it)")
            }
        }
        return notes
    }
}
