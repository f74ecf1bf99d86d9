// Harbor — the introspection requests (`harbor ports`, `harbor print`, `harbor list --all`) and their answers' text.
import Glibc  // types only: pid_t, uid_t
import HarborPorts
import HarborSystem

extension BootstrapRequest {
    /// Body: a pid, in decimal. The server checks that the asker is root or
    /// of the uid the kernel reported for that process's session, and
    /// forwards ``introspect`` to the session with the asker's reply right;
    /// the process answers directly: a ``PortTable``. The server refuses
    /// (not found, not permitted) itself.
    package static let ports: Int32 = 0x4842_0008
    /// Server to session: body empty, reply right the asker's. Answered with
    /// the process's ``PortTable`` text (id 0), or a refusal when the
    /// process turned introspection off. Believed only from the server.
    package static let introspect: Int32 = 0x4842_0009
    /// Body: empty. Reply: the sessions the asker may introspect (root: all;
    /// others: their uid's), a ``BootstrapSessionList``.
    package static let sessions: Int32 = 0x4842_000A
    /// Body: a name, or `NAME TAB SCOPE` (a listing cursor). Reply: a
    /// ``NameReport``.
    package static let print: Int32 = 0x4842_000B
    /// As ``list``, over every uid's namespace: root only.
    package static let listAll: Int32 = 0x4842_000C
    /// `harbor monitor` / `harbor capture`. Body: a name, or `NAME TAB UID`
    /// (root, another uid's name); one carried send right: the monitor's
    /// port, where the records go. The server checks that the name is held
    /// by a process with a session and that the asker is root or the
    /// holder's uid (as the kernel reported it), then forwards ``tap`` to
    /// that session with the monitor's right and the asker's reply right;
    /// the holder answers the asker itself. The server refuses (not found,
    /// not permitted) itself.
    package static let monitor: Int32 = 0x4842_000D
    /// Server to session: body `NAME TAB BODY-PREFIX`, the name as the
    /// process holds it; one carried send right (the monitor's port); reply
    /// right the asker's. The holder taps the name's port and forwards its
    /// records there (`PortMonitor`) until the monitor's port dies or the
    /// name's port does, and answers id 0 (body: the port's number) or a
    /// refusal. Believed only from the server.
    package static let tap: Int32 = 0x4842_000E
}

/// A process's ports as its session answers `harbor ports`: a header line
/// `ports TAB PID TAB TOTAL TAB SHOWN`, then one line a port, TAB-separated:
/// NAME KIND QUEUED LIMIT SEND SEND-ONCE NOTIFICATIONS PEER-PID PEER-UID
/// (notifications `no-senders,port-destroyed,dead-name:N` or `-`; peer `-`
/// when none). Capped: at most ``maximumRows`` rows, the lowest port
/// numbers, and `TOTAL` says how many there are.
package struct PortTable: Sendable, Hashable {
    /// The most rows one answer holds (one message: well under 64 KiB).
    package static let maximumRows = 400

    /// The answering process, as it says (the asker checks it against the
    /// reply's kernel-verified sender).
    package var pid: pid_t
    /// Ports live in the process.
    package var total: Int
    /// The rows sent (at most ``maximumRows``).
    package var rows: [PortReport]

    package init(pid: pid_t, total: Int, rows: [PortReport]) {
        self.pid = pid
        self.total = total
        self.rows = rows
    }

    /// This process's table, now.
    package static func current() -> PortTable {
        let (rows, total) = LivePorts.reading(limit: maximumRows, PortReport.init)
        return PortTable(pid: ProcessIdentity.current.pid, total: total, rows: rows)
    }

    /// The notification column.
    package static func notifications(_ row: PortReport) -> String {
        var armed: [String] = []
        if row.noSenders { armed.append("no-senders") }
        if row.portDestroyed { armed.append("port-destroyed") }
        if row.deadNames > 0 { armed.append("dead-name:\(row.deadNames)") }
        return armed.isEmpty ? "-" : armed.joined(separator: ",")
    }

    /// The answer's text.
    package var encoded: String {
        var lines = ["ports\t\(pid)\t\(total)\t\(rows.count)"]
        for row in rows {
            lines.append([String(row.name), row.kind.rawValue, String(row.queued), String(row.queueLimit),
                          String(row.sendRights), String(row.sendOnceRights), Self.notifications(row),
                          row.peer.map { String($0.pid) } ?? "-", row.peer.map { String($0.uid) } ?? "-"]
                .joined(separator: "\t"))
        }
        return lines.joined(separator: "\n")
    }

    /// Decodes an answer (hostile input: another process wrote it); nil if
    /// any line is malformed or it holds more than ``maximumRows`` rows.
    package init?(decoding text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let header = lines.first, lines.count - 1 <= Self.maximumRows else { return nil }
        let head = header.split(separator: "\t", omittingEmptySubsequences: false)
        guard head.count == 4, head[0] == "ports", let pid = pid_t(head[1]), let total = Int(head[2]),
              let shown = Int(head[3]), shown == lines.count - 1, total >= shown else { return nil }
        var rows: [PortReport] = []
        for line in lines.dropFirst() {
            let field = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard field.count == 9, let name = UInt64(field[0]), let kind = PortReport.Kind(rawValue: field[1]),
                  let queued = Int(field[2]), let limit = Int(field[3]), let send = Int(field[4]),
                  let sendOnce = Int(field[5]), queued >= 0, limit >= 0, send >= 0, sendOnce >= 0 else { return nil }
            var row = PortReport(name: name, kind: kind)
            row.queued = queued
            row.queueLimit = limit
            row.sendRights = send
            row.sendOnceRights = sendOnce
            if field[6] != "-" {
                for armed in field[6].split(separator: ",", omittingEmptySubsequences: false) {
                    if armed == "no-senders" {
                        row.noSenders = true
                    } else if armed == "port-destroyed" {
                        row.portDestroyed = true
                    } else if armed.hasPrefix("dead-name:"), let count = Int(armed.dropFirst(10)), count > 0 {
                        row.deadNames = count
                    } else {
                        return nil
                    }
                }
            }
            if field[7] != "-" || field[8] != "-" {
                guard let peerPid = pid_t(field[7]), let peerUid = uid_t(field[8]) else { return nil }
                row.peer = ProcessIdentity(pid: peerPid, uid: peerUid, gid: 0)
            }
            rows.append(row)
        }
        self.init(pid: pid, total: total, rows: rows)
    }
}
