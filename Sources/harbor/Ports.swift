// Harbor — `harbor ports`: a process's ports and rights (Darwin's lsmp), answered by the process itself.
import ArgumentParser
import Glibc
import HarborBootstrap
import HarborPorts

struct Ports: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ports",
        abstract: "List a Harbor process's ports and rights (like Darwin's lsmp).",
        discussion: """
            Asks harbord, which checks that you are root or of the process's uid (as the kernel \
            reported it) and passes the question to the process's session; the process answers \
            you itself. Only processes holding names have a session; a process started with \
            HARBOR_INTROSPECTION=off refuses. \
            Columns: PID (the process asked), PORT (its number there), KIND (receive, send, send-once, \
            dead), QUEUED, LIMIT (receive rights; 0 otherwise), SEND, SEND-ONCE (live rights), \
            NOTIFY (armed: no-senders, port-destroyed, dead-name:N, or -), PEER (for a send right, \
            the receiving process as PID:UID from the connection's SO_PEERCRED, else -); fields never \
            contain whitespace. A process shows at most 400 ports, the lowest numbers; a line \
            on stderr says so when it holds more. --all: every process you may look into (exit 0 if \
            one answered; each that did not says why on stderr). \
            With --json: one object a line, a port each, {"pid", "port", "kind", "queued", "limit", \
            "send", "send_once", "notifications", "dead_names", "peer_pid", "peer_uid", "total"} \
            (Docs/schemas/harbor-ports.schema.json). \
            Exit status 0 listed, 2 no such process holding names, 3 name server unreachable, \
            4 no answer in time (a stopped or busy process), 5 not permitted (another uid, or \
            introspection off).
            """)

    @Argument(help: "The process id.") var pid: Int32?
    @Flag(name: .long, help: "Every process you may look into (root: all).") var all = false
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object a line, a port each (Docs/schemas/harbor-ports.schema.json).")
    var json = false

    func validate() throws {
        guard (pid != nil) != all else { throw ValidationError("name one PID, or --all") }
        if let pid, pid <= 0 { throw ValidationError("PID must be positive") }
    }

    func run() throws {
        let client = try connection.connect()
        var pids: [Int32] = []
        if let pid {
            pids = [pid]
        } else {
            do { pids = try client.introspectableProcesses().map(\.pid) } catch { throw CommandFailure(error) }
        }
        var failure: CommandFailure?
        var rows: [[String]] = []
        var answered = 0
        for pid in pids {
            let table: PortTable
            do { table = try client.ports(of: pid) } catch {
                let failed = CommandFailure(error, name: "pid \(pid)")
                // One process gone or stopped does not end --all.
                guard all else { throw failed }
                printError(failed.message)
                failure = failed
                continue
            }
            answered += 1
            if table.total > table.rows.count {
                printError("pid \(pid): \(table.total) ports; showing the \(table.rows.count) with the lowest numbers")
            }
            for row in table.rows {
                if json {
                    say(Self.jsonObject(row, pid: pid, total: table.total))
                } else {
                    rows.append(Self.fields(row, pid: pid))
                }
            }
        }
        if !json { Self.printColumns(rows) }
        // --all: 0 if any process answered (the others said why on stderr).
        if let failure, answered == 0 { Glibc.exit(failure.code) }
    }

    /// One row's fields, whitespace-free.
    static func fields(_ row: PortReport, pid: Int32) -> [String] {
        [String(pid), String(row.name), row.kind.rawValue, String(row.queued), String(row.queueLimit),
         String(row.sendRights), String(row.sendOnceRights), PortTable.notifications(row),
         row.peer.map { "\($0.pid):\($0.uid)" } ?? "-"]
    }

    static func printColumns(_ rows: [[String]]) {
        guard !rows.isEmpty else { return }
        let all = [["PID", "PORT", "KIND", "QUEUED", "LIMIT", "SEND", "SEND-ONCE", "NOTIFY", "PEER"]] + rows
        let widths = (0..<9).map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            say(row.enumerated().map { index, cell in
                index == 8 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  "))
        }
    }

    /// One port as a JSON object (Docs/schemas/harbor-ports.schema.json).
    static func jsonObject(_ row: PortReport, pid: Int32, total: Int) -> String {
        var notifications: [String] = []
        if row.noSenders { notifications.append(JSONText.string("no-senders")) }
        if row.portDestroyed { notifications.append(JSONText.string("port-destroyed")) }
        if row.deadNames > 0 { notifications.append(JSONText.string("dead-name")) }
        return JSONText.object([
            ("pid", String(pid)), ("port", String(row.name)), ("kind", JSONText.string(row.kind.rawValue)),
            ("queued", String(row.queued)), ("limit", String(row.queueLimit)), ("send", String(row.sendRights)),
            ("send_once", String(row.sendOnceRights)), ("notifications", "[" + notifications.joined(separator: ",") + "]"),
            ("peer_pid", row.peer.map { String($0.pid) } ?? "null"), ("peer_uid", row.peer.map { String($0.uid) } ?? "null"),
            ("dead_names", String(row.deadNames)), ("total", String(total)),
        ])
    }
}
