// Harbor — O01–O03: the `harbor` CLI scripts well: --json per command against its schema, exit codes, fields that split.
import Foundation
import Glibc
import HarborBootstrap
import HarborPorts
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct CLIOutputTests {
        /// Every subcommand, each with a schema file in Docs/schemas.
        static let commands = ["lookup", "list", "send", "ping", "watch", "hold", "introspect", "call", "ports", "print",
                               "monitor", "capture"]

        /// A finished run's stdout, every line checked against `command`'s
        /// schema and printable ASCII (JSON escaping, not raw controls); the
        /// lines parsed.
        private func checked(_ output: String, _ command: String) throws -> [Any] {
            let schema = try JSONSchemaCheck(command: command)
            #expect(output.utf8.allSatisfy { $0 == 0x0A || (0x20...0x7E).contains($0) }, "\(command): \(output.debugDescription)")
            let lines = output.split(separator: "\n")
            for line in lines {
                let problems = schema.problems(line: line)
                #expect(problems.isEmpty, "\(command) --json: \(problems) in \(line)")
            }
            return lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
        }

        /// Runs `harbor ARGUMENTS` to its end; its stdout checked against `command`'s schema.
        private func json(_ harbord: HarbordProcess, _ command: String, _ arguments: [String]) throws -> [[String: Any]] {
            let child = harbord.harbor([command] + arguments + ["--json"])
            let output = child.allStdout()
            #expect(child.exitCode() == 0, "\(command): \(child.stderrSoFar)")
            return try checked(output, command).compactMap { $0 as? [String: Any] }
        }

        /// O01: every subcommand's `--json` prints one JSON object a line
        /// that its schema (Docs/schemas/harbor-COMMAND.schema.json, read
        /// and checked here) admits; a peer's control characters come out
        /// as JSON `\uXXXX` escapes.
        @Test func O01_everyCommandsJSONFollowsItsSchema() throws {
            try expectNoDescriptorLeak { () throws in try everyCommandsJSON() }
        }

        private func everyCommandsJSON() throws {
            for command in Self.commands { _ = try JSONSchemaCheck(command: command) }
            let harbord = HarbordProcess(policy: "shared common owner=0 unit=common.service\n")
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let held = try client.checkIn("mine.json")

            let listed = try json(harbord, "list", [])
            #expect(Set(listed.compactMap { $0["name"] as? String }) == ["common", "mine.json"], "\(listed)")
            let common = try json(harbord, "lookup", ["common"])
            #expect(common.count == 1 && common.first?["state"] as? String == "waiting"
                    && common.first?["unit"] as? String == "common.service" && common.first?["uid"] is NSNull, "\(common)")
            let mine = try json(harbord, "lookup", ["mine.json"])
            #expect(mine.first?["scope"] as? String == "user:\(getuid())" && mine.first?["pid"] as? Int == Int(getpid()), "\(mine)")

            let watch = harbord.harbor(["watch", "o1.watch", "--json", "--count", "3", "--idle", "20"])
            #expect(watch.waitForStdout(#""event":"watching""#), "\(watch.stderrSoFar)")
            let sent = try json(harbord, "send", ["o1.watch", "bell\u{7}", "esc\u{1B}[31m", "--id", "9"])
            #expect(sent.first?["text"] as? String == "bell\u{7} esc\u{1B}[31m" && sent.first?["id"] as? Int == 9, "\(sent)")
            try client.lookUp("o1.watch").send(Message(id: 10, body: [0xFF, 0x00, 0x41]), timeout: .seconds(5))
            let ping = try json(harbord, "ping", ["o1.watch", "-c", "1"])
            #expect(ping.first?["replies"] as? Int == 1 && (ping.first?["rtt_us"] as? [Any])?.count == 1, "\(ping)")
            let printed = watch.allStdout()
            #expect(watch.exitCode() == 0, "\(watch.stderrSoFar)")
            #expect(printed.contains(#""text":"bell\u0007 esc\u001b[31m""#), "\(printed)")
            let events = try checked(printed, "watch").compactMap { $0 as? [String: Any] }
            #expect(events.count == 4, "\(printed)")
            if events.count == 4 {
                #expect(events[0]["event"] as? String == "watching" && events[0]["waiting"] as? Int == 0)
                #expect(events[1]["id"] as? Int == 9 && events[1]["uid"] as? Int == Int(getuid()))
                #expect(events[2]["text"] is NSNull && events[2]["hex"] as? String == "ff0041")
                #expect(events[3]["id"] as? Int == 0x5049_4E47 && events[3]["reply_right"] as? Bool == true)
            }

            let hold = harbord.harbor(["hold", "o1.hold", "--count", "2", "--json"])
            #expect(hold.waitForStdout("holding"), "\(hold.stderrSoFar)")
            kill(hold.pid, SIGTERM)
            #expect(hold.exitCode() == 0)
            let holding = try checked(hold.allStdout(), "hold").compactMap { $0 as? [String: Any] }
            #expect(holding.first?["names"] as? [String] == ["o1.hold.1", "o1.hold.2"], "\(holding)")

            let service = Child([builtExecutable("harbor-xpc-probe"), "methods", "o1.methods"],
                                environment: baseEnvironment() + ["HARBOR_BOOTSTRAP=\(harbord.socketPath)"])
            defer { kill(service.pid, SIGKILL); service.waitForExit() }
            #expect(service.waitForStdout("ready o1.methods"), "\(service.stderrSoFar)")
            let interface = try json(harbord, "introspect", ["o1.methods"])
            #expect(interface.first?["interface"] as? String == "o1.methods", "\(interface)")
            let reply = try json(harbord, "call", ["o1.methods", "echo", #"{"n":7,"op":"x"}"#])
            #expect(reply.first?["n"] as? Int == 7, "\(reply)")
            // This process holds mine.json: its session answers for it.
            let ports = try json(harbord, "ports", [String(getpid())])
            #expect(ports.contains { $0["kind"] as? String == "receive" }, "\(ports)")
            let record = try json(harbord, "print", ["mine.json"])
            #expect(record.first?["pid"] as? Int == Int(getpid()) && record.first?["state"] as? String == "active", "\(record)")
            _ = held
        }

        /// O02: `--version` prints the one version on both executables;
        /// every subcommand's `--help` states its exit statuses; and the
        /// statuses are the documented ones: 2 no such name, 3 name server
        /// unreachable, 1 refused, 4 no answer in time, 64 wrong arguments.
        @Test func O02_versionAndDocumentedExitCodes() throws {
            try expectNoDescriptorLeak { () throws in try exitCodes() }
        }

        private func exitCodes() throws {
            for executable in ["harbor", "harbord"] {
                let child = Child([builtExecutable(executable), "--version"], environment: baseEnvironment())
                #expect(child.allStdout() == HarborVersion.string + "\n", "\(executable)")
                #expect(child.exitCode() == 0, "\(executable): \(child.stderrSoFar)")
            }
            for command in Self.commands {
                let help = Child([builtExecutable("harbor"), command, "--help"], environment: baseEnvironment())
                let text = help.allStdout().split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(help.exitCode() == 0)
                #expect(text.contains("Exit status 0") && text.contains("--json"), "harbor \(command) --help: \(text)")
            }
            let nowhere = ["--socket", "/nonexistent/harbor-o02/bootstrap.sock", "--timeout", "2"]
            let unreachable: [[String]] = [["lookup", "x"], ["list"], ["send", "x", "hi"], ["ping", "x"], ["watch", "x"],
                                           ["hold", "x"], ["introspect", "x"], ["call", "x", "m"], ["ports", "1"],
                                           ["print", "x"], ["ports", "--all"], ["monitor", "x"],
                                           ["capture", "x", "-w", "/dev/null"]]
            for arguments in unreachable {
                let child = Child([builtExecutable("harbor")] + arguments + nowhere, environment: baseEnvironment())
                #expect(child.exitCode() == 3, "harbor \(arguments): \(child.stderrSoFar)")
            }
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let held = try harbord.client().checkIn("o2.held")
            for arguments in [["lookup", "o2.none"], ["send", "o2.none", "hi"], ["ping", "o2.none"],
                              ["introspect", "o2.none"], ["call", "o2.none", "m"]] {
                let child = harbord.harbor(arguments + ["--json"])
                #expect(child.exitCode() == 2, "harbor \(arguments): \(child.stderrSoFar)")
                #expect(child.allStdout().isEmpty)
            }
            for arguments in [["hold", "o2.held"], ["watch", "o2.held"]] {
                let child = harbord.harbor(arguments)
                #expect(child.exitCode() == 1, "harbor \(arguments): \(child.stderrSoFar)")
            }
            let idle = harbord.harbor(["watch", "o2.idle", "--idle", "0.3"])
            #expect(idle.exitCode() == 4, "\(idle.stderrSoFar)")
            let wrong = harbord.harbor(["list", "--frob"])
            #expect(wrong.exitCode() == 64, "\(wrong.stderrSoFar)")
            _ = held
        }

        /// O03: human output splits on whitespace into its fields: a
        /// `lookup` line is a `list` row (NAME SCOPE STATE PID UNIT, SCOPE
        /// `user:UID`); a ping's time is one field (`85.2µs`); a watched
        /// message's line starts with its fixed fields.
        @Test func O03_humanOutputFieldsSplitOnWhitespace() throws {
            try expectNoDescriptorLeak { () throws in try fieldsSplit() }
        }

        private func fieldsSplit() throws {
            let harbord = HarbordProcess(policy: "shared common owner=0 unit=common.service\n")
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let held = try harbord.client().checkIn("o3.mine")
            let mine = harbord.harbor(["lookup", "o3.mine"])
            let fields = mine.allStdout().split(whereSeparator: \.isWhitespace)
            #expect(mine.exitCode() == 0)
            #expect(fields == ["o3.mine", "user:\(getuid())", "active", "\(getpid())", "-"], "\(fields)")
            let common = harbord.harbor(["lookup", "common"])
            #expect(common.allStdout().split(whereSeparator: \.isWhitespace) == ["common", "shared", "waiting", "-", "common.service"])

            let watch = harbord.harbor(["watch", "o3.watch", "--count", "1", "--idle", "20"])
            #expect(watch.waitForStdout("watching o3.watch"), "\(watch.stderrSoFar)")
            let ping = harbord.harbor(["ping", "o3.watch", "-c", "1"])
            let lines = ping.allStdout().split(separator: "\n")
            #expect(ping.exitCode() == 0, "\(ping.stderrSoFar)")
            let reply = lines.first { $0.hasPrefix("reply from") }?.split(separator: " ") ?? []
            #expect(reply.count == 7 && reply[5] == "time", "\(lines)")
            let time = reply.last.map(String.init) ?? ""
            #expect((time.hasSuffix("µs") || time.hasSuffix("ms")) && Double(time.dropLast(2)) != nil, "\(time)")
            let line = watch.allStdout().split(separator: "\n").last.map(String.init) ?? ""
            #expect(watch.exitCode() == 0)
            #expect(line == "id PING from pid \(ping.pid) uid \(getuid()): \"1\" (reply right)", "\(line)")
            _ = held
        }
    }
}
