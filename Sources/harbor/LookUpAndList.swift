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
        abstract: "List the names you can see: your own and the shared ones.")

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let client = try connection.connect()
        let entries: [BootstrapEntry]
        do { entries = try client.list() } catch { throw CommandFailure(error) }
        guard !entries.isEmpty else {
            say("no names")
            return
        }
        let rows = [["NAME", "SCOPE", "STATE", "PID", "UNIT"]] + entries.map { entry in
            [entry.name, "\(entry.scope)", "\(entry.state)", entry.pid.map { String($0) } ?? "-", entry.unit ?? "-"]
                .map(TerminalText.escaped)  // escaped before measuring, so the columns line up
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            say(row.enumerated().map { index, cell in
                index == 4 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  "))
        }
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
