// Harbor — `harbor lookup` and `harbor list`.
import ArgumentParser
import HarborBootstrap

struct LookUp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Look a service up by name and say where it is.",
        discussion: """
            Prints one line of five whitespace-free fields, as a `harbor list` row: NAME, SCOPE \
            (user:UID or shared), STATE (active, waiting, registered), PID, UNIT (- when none or not \
            known). With --json: one object {"name", "scope", "uid", "state", "pid", "unit"} \
            (Docs/schemas/harbor-lookup.schema.json). \
            Exit status 0 if the name is visible to you (your own names and shared ones), 2 no such \
            name, 3 name server unreachable, 4 no answer in time, 5 not permitted.
            """)

    @Argument(help: "The service name.") var name: String
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object (Docs/schemas/harbor-lookup.schema.json).")
    var json = false

    func run() throws {
        let client = try connection.connect()
        do {
            _ = try client.lookUp(name)
            let entry = try? client.list().first { $0.name == name }
            if json {
                say(entry.map(List.jsonObject) ?? JSONText.object([
                    ("name", JSONText.string(name)), ("scope", "null"), ("uid", "null"),
                    ("state", "null"), ("pid", "null"), ("unit", "null"),
                ]))
            } else {
                say(List.fields(entry, name: name).joined(separator: " "))
            }
        } catch {
            throw CommandFailure(error, name: name)
        }
    }
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the names you can see: your own and the shared ones (root, --all: every uid's).",
        discussion: """
            Columns: NAME, SCOPE (user:UID or shared), STATE (active, waiting, registered), PID, UNIT \
            (- when none); fields never contain whitespace. With --json: one object a line, a name each, \
            {"name", "scope", "uid", "state", "pid", "unit"} (Docs/schemas/harbor-list.schema.json); \
            nothing for no names. --all (root only): every uid's names and the shared ones. \
            Exit status 0 listed, 3 name server unreachable, 4 no answer in time, 5 not permitted (--all but not root).
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object a line, a name each (Docs/schemas/harbor-list.schema.json).")
    var json = false

    @Flag(name: .long, help: "Every uid's names (root only).") var all = false

    func run() throws {
        let client = try connection.connect()
        let entries: [BootstrapEntry]
        do { entries = try all ? client.listAll() : client.list() } catch { throw CommandFailure(error) }
        if json {
            for entry in entries { say(Self.jsonObject(entry)) }
            return
        }
        guard !entries.isEmpty else {
            say("no names")
            return
        }
        let rows = [["NAME", "SCOPE", "STATE", "PID", "UNIT"]] + entries.map { entry in
            Self.fields(entry, name: entry.name)
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

    /// A row's five fields, each escaped (``TerminalText``) and free of
    /// whitespace: NAME, SCOPE, STATE, PID, UNIT (`-` for what is not known).
    static func fields(_ entry: BootstrapEntry?, name: String) -> [String] {
        [name, entry.map { scopeField($0.scope) } ?? "-", entry.map { "\($0.state)" } ?? "-",
         entry?.pid.map { String($0) } ?? "-", entry?.unit ?? "-"]
            .map { field in
                // Escaped before measuring, so the columns line up; a space
                // (valid names hold none) shows as \x20, so the field stays one.
                let escaped = TerminalText.escaped(field)
                return escaped.isEmpty ? "-" : escaped.replacing(" ", with: "\\x20")
            }
    }

    /// One name as a JSON object (Docs/schemas/harbor-list.schema.json).
    static func jsonObject(_ entry: BootstrapEntry) -> String {
        let uid: String
        if case .user(let owner) = entry.scope { uid = String(owner) } else { uid = "null" }
        return JSONText.object([
            ("name", JSONText.string(entry.name)),
            ("scope", JSONText.string(scopeField(entry.scope))),
            ("uid", uid),
            ("state", JSONText.string(entry.state.rawValue)),
            ("pid", entry.pid.map { String($0) } ?? "null"),
            ("unit", JSONText.optional(entry.unit)),
        ])
    }
}
