// Harbor — `harbor print`: what harbord knows of one name (launchctl print).
import ArgumentParser
import Glibc
import HarborBootstrap

struct Print: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "print",
        abstract: "Print what the name server knows of a name (like launchctl print).",
        discussion: """
            One `FIELD VALUE` line a field, each splitting on whitespace into exactly two: name, scope \
            (user:UID or shared), state (active, waiting, registered), origin (declared, checked-in, \
            registered), pid (the holder, as the kernel said; - when nobody holds it), unit (the policy's \
            unit=), cgroup-unit (the holder's systemd unit, read here from /proc/PID/cgroup: advisory, \
            as the pid may have been reused; - when unknown), queued (messages waiting for a waiting \
            name; - while a service holds it: see `harbor ports PID`), lookups (look-ups answered with a \
            send right), checkins (times a process took it), since (when the holder took it, UTC, \
            ISO 8601; - when nobody holds it); then `waiting user:UID COUNT` lines, waiting messages \
            per sender's uid. Root may name another uid's name with --uid. \
            With --json: one object {"name", "scope", "uid", "state", "origin", "pid", "unit", \
            "cgroup_unit", "queued", "lookups", "checkins", "since", "waiting": [{"uid", "count"}]} \
            (Docs/schemas/harbor-print.schema.json; since in Unix seconds). \
            Exit status 0 printed, 2 no such name, 3 name server unreachable, 4 no answer in time, \
            5 not permitted.
            """)

    @Argument(help: "The service name.") var name: String
    @Option(name: .long, help: "The uid whose name it is (root: any uid's).") var uid: UInt32?
    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .long, help: "Print one JSON object (Docs/schemas/harbor-print.schema.json).")
    var json = false

    func run() throws {
        let client = try connection.connect()
        let report: NameReport
        do { report = try client.report(name, uid: uid) } catch { throw CommandFailure(error, name: name) }
        let unit = report.pid.flatMap(Self.cgroupUnit)
        if json {
            let uid: String
            if case .user(let owner) = report.scope { uid = String(owner) } else { uid = "null" }
            say(JSONText.object([
                ("name", JSONText.string(report.name)), ("scope", JSONText.string(List.scopeField(report.scope))),
                ("uid", uid), ("state", JSONText.string(report.state.rawValue)),
                ("origin", JSONText.string(report.origin)), ("pid", report.pid.map { String($0) } ?? "null"),
                ("unit", JSONText.optional(report.unit)), ("cgroup_unit", JSONText.optional(unit)),
                ("queued", report.queued.map { String($0) } ?? "null"), ("lookups", String(report.lookUps)),
                ("checkins", String(report.checkIns)), ("since", report.since.map { String($0) } ?? "null"),
                ("waiting", "[" + report.waitingByUID.sorted { $0.key < $1.key }.map {
                    JSONText.object([("uid", String($0.key)), ("count", String($0.value))])
                }.joined(separator: ",") + "]"),
            ]))
            return
        }
        let lines: [(String, String)] = [
            ("name", report.name), ("scope", List.scopeField(report.scope)), ("state", report.state.rawValue),
            ("origin", report.origin), ("pid", report.pid.map { String($0) } ?? "-"), ("unit", report.unit ?? "-"),
            ("cgroup-unit", unit ?? "-"), ("queued", report.queued.map { String($0) } ?? "-"),
            ("lookups", String(report.lookUps)), ("checkins", String(report.checkIns)),
            ("since", report.since.map(Self.iso8601) ?? "-"),
        ]
        for (field, value) in lines { say("\(field) \(Self.field(value))") }
        for (uid, count) in report.waitingByUID.sorted(by: { $0.key < $1.key }) { say("waiting user:\(uid) \(count)") }
    }

    /// A value as one whitespace-free field (escaped by ``say``; a space as `\x20`).
    static func field(_ value: String) -> String {
        let escaped = TerminalText.escaped(value)
        return escaped.isEmpty ? "-" : escaped.replacing(" ", with: "\\x20")
    }

    /// `seconds` since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
    static func iso8601(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return String(seconds) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// The systemd unit `pid` runs in, from `/proc/PID/cgroup` (the last
    /// `.service` or `.scope` of its cgroup path); nil if unreadable or none.
    /// Advisory: the pid may have been reused since the server saw it.
    static func cgroupUnit(_ pid: Int32) -> String? {
        let fd = open("/proc/\(pid)/cgroup", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        for line in text.split(separator: "\n") {
            // cgroup v2: "0::/system.slice/harbord.service"
            guard line.hasPrefix("0::") else { continue }
            let unit = line.dropFirst(3).split(separator: "/").last { $0.hasSuffix(".service") || $0.hasSuffix(".scope") }
            return unit.map(String.init)
        }
        return nil
    }
}
