// Harbor — `harbor lookup` and `harbor list`.
import ArgumentParser
import HarborBootstrap

struct LookUp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Look a service up by name and say where it is.",
        discussion: "Exit status 0 if the name is visible to you (your own names and shared ones), 2 if not.")

    @Argument(help: "The service name.") var name: String
    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let client = try connection.connect()
        do {
            _ = try client.lookUp(name)
            let entry = try? client.list().first { $0.name == name }
            say("\(name): " + (entry.map(describe) ?? "found"))
        } catch {
            throw CommandFailure(error, name: name)
        }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the names you can see: your own and the shared ones.",
        discussion: """
            Columns: NAME, SCOPE (user:UID or shared), STATE (active, waiting, registered), PID, UNIT \
            (- when none); fields never contain spaces. With --json: one array of objects \
            {"name", "scope", "uid", "state", "pid", "unit"} (Docs/harbord.md).
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print a JSON array, one object per name (Docs/harbord.md has the schema).")
    var json = false

    func run() throws {
        let client = try connection.connect()
        let entries: [BootstrapEntry]
        do { entries = try client.list() } catch { throw CommandFailure(error) }
        if json {
            printJSON(entries)
            return
        }
        guard !entries.isEmpty else {
            say("no names")
            return
        }
        let rows = [["NAME", "SCOPE", "STATE", "PID", "UNIT"]] + entries.map { entry in
            [entry.name, Self.scopeField(entry.scope), "\(entry.state)", entry.pid.map { String($0) } ?? "-", entry.unit ?? "-"]
                .map(TerminalText.escaped)  // escaped before measuring, so the columns line up
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            say(row.enumerated().map { index, cell in
                index == 4 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  "))
        }
    }

    /// The SCOPE column: `user:UID` or `shared`, one whitespace-free field.
    static func scopeField(_ scope: BootstrapEntry.Scope) -> String {
        switch scope {
        case .user(let uid): "user:\(uid)"
        case .shared: "shared"
        }
    }

    /// `[` then one object a line, comma-separated, then `]` (`[]` for no names).
    private func printJSON(_ entries: [BootstrapEntry]) {
        guard !entries.isEmpty else {
            say("[]")
            return
        }
        say("[")
        for (index, entry) in entries.enumerated() {
            let uid: String
            if case .user(let owner) = entry.scope { uid = String(owner) } else { uid = "null" }
            let object = JSONText.object([
                ("name", JSONText.string(entry.name)),
                ("scope", JSONText.string(Self.scopeField(entry.scope))),
                ("uid", uid),
                ("state", JSONText.string(entry.state.rawValue)),
                ("pid", entry.pid.map { String($0) } ?? "null"),
                ("unit", JSONText.optional(entry.unit)),
            ])
            say(object + (index == entries.count - 1 ? "" : ","))
        }
        say("]")
    }
}

/// "active (user 0, pid 42)", "waiting (shared, unit x.service): messages wait for the service".
func describe(_ entry: BootstrapEntry) -> String {
    var details = ["\(entry.scope)"]
    if let pid = entry.pid { details.append("pid \(pid)") }
    if let unit = entry.unit { details.append("unit \(unit)") }
    let note = entry.state == .waiting ? ": not checked in, messages wait for the service" : ""
    return "\(entry.state) (\(details.joined(separator: ", ")))\(note)"
}
