// Harbor — one name as `harbor print` shows it (launchctl print).
import Glibc  // types only: pid_t, uid_t

/// What the name server knows of one name, for `harbor print NAME`: the
/// reply to ``BootstrapRequest/print``, one `KEY TAB VALUE` line a field
/// (`waiting TAB UID TAB COUNT` once per uid with messages waiting).
package struct NameReport: Sendable, Hashable {
    package var name: String
    package var scope: BootstrapEntry.Scope
    package var state: BootstrapEntry.State
    /// `declared` (the policy file), `checked-in` or `registered`.
    package var origin: String
    /// The process holding it (checked in or registered), as the kernel said.
    package var pid: pid_t?
    /// The unit the policy names for it.
    package var unit: String?
    /// Messages the server keeps for a waiting name; nil while a service
    /// holds it (its queue is in the holder: `harbor ports PID`).
    package var queued: Int?
    /// Of those, how many each uid sent.
    package var waitingByUID: [uid_t: Int]
    /// Look-ups answered with a send right to it (since the server started).
    package var lookUps: Int
    /// Times a process took it (check-ins and registrations).
    package var checkIns: Int
    /// When its holder took it, in seconds since the Unix epoch.
    package var since: Int?

    package init(name: String, scope: BootstrapEntry.Scope, state: BootstrapEntry.State, origin: String) {
        self.name = name
        self.scope = scope
        self.state = state
        self.origin = origin
        waitingByUID = [:]
        lookUps = 0
        checkIns = 0
    }

    /// The reply's text.
    package var encoded: String {
        var lines = [
            "name\t\(name)",
            "scope\t" + { switch scope { case .shared: "shared"; case .user(let uid): String(uid) } }(),
            "state\t\(state.rawValue)", "origin\t\(origin)",
            "pid\t" + (pid.map { String($0) } ?? "-"), "unit\t" + (unit ?? "-"),
            "queued\t" + (queued.map { String($0) } ?? "-"),
            "lookups\t\(lookUps)", "checkins\t\(checkIns)", "since\t" + (since.map { String($0) } ?? "-"),
        ]
        for (uid, count) in waitingByUID.sorted(by: { $0.key < $1.key }) { lines.append("waiting\t\(uid)\t\(count)") }
        return lines.joined(separator: "\n")
    }

    /// Decodes a reply (from the name server, still checked: nil if malformed).
    package init?(decoding text: String) {
        var fields: [String: String] = [:]
        var waiting: [uid_t: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3, parts[0] == "waiting", let uid = uid_t(parts[1]), let count = Int(parts[2]), count >= 0 {
                waiting[uid] = count
            } else if parts.count == 2, fields[parts[0]] == nil {
                fields[parts[0]] = parts[1]
            } else {
                return nil
            }
        }
        guard let name = fields["name"], BootstrapName.isValid(name), let scopeText = fields["scope"],
              let state = fields["state"].flatMap(BootstrapEntry.State.init(rawValue:)), let origin = fields["origin"],
              let lookUps = fields["lookups"].flatMap({ Int($0) }), let checkIns = fields["checkins"].flatMap({ Int($0) })
        else { return nil }
        let scope: BootstrapEntry.Scope
        if scopeText == "shared" {
            scope = .shared
        } else if let uid = uid_t(scopeText) {
            scope = .user(uid)
        } else {
            return nil
        }
        self.init(name: name, scope: scope, state: state, origin: origin)
        pid = fields["pid"].flatMap { pid_t($0) }
        unit = fields["unit"].flatMap { $0 == "-" ? nil : $0 }
        queued = fields["queued"].flatMap { Int($0) }
        since = fields["since"].flatMap { Int($0) }
        self.lookUps = lookUps
        self.checkIns = checkIns
        waitingByUID = waiting
    }
}
