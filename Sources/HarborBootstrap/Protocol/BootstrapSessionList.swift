// Harbor — the sessions an asker may introspect (`harbor ports --all`).
import Glibc  // types only: pid_t, uid_t

/// The reply to ``BootstrapRequest/sessions``: one `PID TAB UID TAB NAMES`
/// line a live session (a process holding names), at most ``maximumRows``.
package struct BootstrapSessionList: Sendable, Hashable {
    /// The most sessions one reply lists.
    package static let maximumRows = 2048

    /// One process with a session.
    package struct Row: Sendable, Hashable {
        package var pid: pid_t
        package var uid: uid_t
        /// Names it holds.
        package var names: Int
    }

    package var rows: [Row]

    package init(rows: [Row]) { self.rows = rows }

    /// The reply's text.
    package var encoded: String { rows.map { "\($0.pid)\t\($0.uid)\t\($0.names)" }.joined(separator: "\n") }

    /// Decodes a reply; nil if malformed or too long.
    package init?(decoding text: String) {
        var rows: [Row] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard rows.count < Self.maximumRows, parts.count == 3, let pid = pid_t(parts[0]), let uid = uid_t(parts[1]),
                  let names = Int(parts[2]) else { return nil }
            rows.append(Row(pid: pid, uid: uid, names: names))
        }
        self.rows = rows
    }
}
