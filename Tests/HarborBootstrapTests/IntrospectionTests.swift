// Harbor — O07–O08: `harbor ports PID` (lsmp) answered by the process's session through harbord, and
// `harbor print NAME` / `harbor list --all` (launchctl print) from harbord's table.
import Foundation
import Glibc
import HarborBootstrap
import HarborPorts
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct IntrospectionTests {
        /// `harbor hold NAME` as a target process: it checks the name in
        /// (so it has a session) and waits.
        private func holder(_ harbord: HarbordProcess, _ name: String, asNobody: Bool = false,
                            environment: [String] = []) -> Child {
            let child: Child
            if environment.isEmpty {
                child = harbord.harbor(["hold", name], asNobody: asNobody)
            } else {
                child = Child([builtExecutable("harbor"), "hold", name],
                              environment: baseEnvironment() + ["HARBOR_BOOTSTRAP=\(harbord.socketPath)"] + environment)
            }
            #expect(child.waitForStdout("holding"), "\(child.stderrSoFar)")
            return child
        }

        private func end(_ child: Child) {
            kill(child.pid, SIGKILL)
            _ = child.waitForExit()
        }

        private func jsonLines(_ child: Child, _ command: String) throws -> [[String: Any]] {
            try JSONSchemaCheck.objects(printedBy: child, command: command)
        }

        /// O07: the same uid sees a process's ports, as the process itself
        /// answers (its receive rights with queue depth and limit, its send
        /// right to harbord with harbord as the peer, armed notifications),
        /// in JSON by the schema and in human rows of nine fields; `--all`
        /// finds it; a pid without a session is "no such process" (2).
        @Test func O07_sameUidSeesAProcessPorts() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let target = holder(harbord, "o7.same")
            defer { end(target) }
            // Two messages wait for the holder (in its socket: counted by the port's slot counter).
            let service = try harbord.client().lookUp("o7.same")
            try service.send(Message(id: 1), timeout: .seconds(5))
            try service.send(Message(id: 2), timeout: .seconds(5))

            let asked = harbord.harbor(["ports", String(target.pid), "--json"])
            let rows = try jsonLines(asked, "ports")
            #expect(asked.exitCode() == 0, "\(asked.stderrSoFar)")
            #expect(rows.allSatisfy { $0["pid"] as? Int == Int(target.pid) }, "\(rows)")
            let receives = rows.filter { $0["kind"] as? String == "receive" }
            #expect(receives.count >= 2 && receives.allSatisfy { ($0["limit"] as? Int ?? 0) > 0 }, "\(rows)")
            #expect(receives.contains { $0["queued"] as? Int == 2 && ($0["send"] as? Int ?? 0) >= 1 }, "\(rows)")
            // The session's right to harbord's bootstrap port, and its dead-name request on it.
            #expect(rows.contains { $0["kind"] as? String == "send" && $0["peer_pid"] as? Int == Int(harbord.child.pid)
                && ($0["notifications"] as? [String])?.contains("dead-name") == true }, "\(rows)")
            #expect(rows.first?["total"] as? Int ?? 0 >= rows.count)

            let human = harbord.harbor(["ports", String(target.pid)])
            let lines = human.allStdout().split(separator: "\n")
            #expect(human.exitCode() == 0, "\(human.stderrSoFar)")
            #expect(lines.first?.split(whereSeparator: \.isWhitespace).first == "PID" && lines.count == rows.count + 1)
            #expect(lines.allSatisfy { $0.split(whereSeparator: \.isWhitespace).count == 9 }, "\(lines)")

            let all = harbord.harbor(["ports", "--all", "--json"])
            let everyone = try jsonLines(all, "ports")
            #expect(all.exitCode() == 0, "\(all.stderrSoFar)")
            #expect(everyone.contains { $0["pid"] as? Int == Int(target.pid) }, "\(everyone)")

            let none = harbord.harbor(["ports", String(harbord.child.pid)])
            #expect(none.exitCode() == 2, "\(none.stderrSoFar)")
        }

        /// O07: the table lists this process's ports from the weak registry,
        /// with what is queued and armed, and is capped at 400 rows (the
        /// lowest numbers) with the true total; a table from another
        /// process is decoded as hostile input.
        @Test func O07_tableIsReadFromTheRegistryCappedAndCheckedOnArrival() throws {
            let port = ReceiveRight()
            try port.setQueueLimit(7)
            let notices = ReceiveRight()
            port.requestNoSendersNotification(to: notices.makeSendOnceRight())
            let sender = port.makeSendRight()
            try sender.send(Message(id: 1), timeout: .zero)
            try sender.send(Message(id: 2), timeout: .zero)
            var table = PortTable.current()
            let row = table.rows.first { $0.name == port.name.rawValue }
            #expect(row?.kind == .receive && row?.queued == 2 && row?.queueLimit == 7 && row?.sendRights == 1
                    && row?.noSenders == true, "\(String(describing: row))")
            #expect(PortTable(decoding: table.encoded) == table)

            // Dead names (their receive rights gone at once) are ports too.
            var many = (0..<(PortTable.maximumRows + 10)).map { _ in ReceiveRight().makeSendRight() }
            table = PortTable.current()
            #expect(table.rows.first { $0.name == many[0].name.rawValue }?.kind == .dead)
            #expect(table.rows.count == PortTable.maximumRows && table.total >= many.count)
            let gone = many[0].name.rawValue
            many.removeAll()
            #expect(!PortTable.current().rows.contains { $0.name == gone })

            for hostile in ["", "ports\t1\t0\t1", "ports\t1\t1\t1\n5\treceive\t-1\t5\t0\t0\t-\t-\t-",
                            "ports\t1\t1\t1\n5\tsuper\t0\t5\t0\t0\t-\t-\t-", "ports\t1\t1\t1\n5\tsend\t0\t0\t1\t0\tdead-name:x\t-\t-",
                            "ports\t1\t1\t1\n5\tsend\t0\t0\t1\t0\t-\t7\t-"] {
                #expect(PortTable(decoding: hostile) == nil, "\(hostile.debugDescription)")
            }
            // More rows than an answer may hold: refused, whatever the header says.
            let rowLine = "\n5\treceive\t0\t5\t0\t0\t-\t-\t-"
            let tooLong = "ports\t1\t401\t401" + String(repeating: rowLine, count: PortTable.maximumRows + 1)
            #expect(PortTable(decoding: tooLong) == nil)
            #expect(PortTable(decoding: "ports\t1\t400\t400" + String(repeating: rowLine, count: PortTable.maximumRows)) != nil)
            _ = sender
        }

        /// O07: harbord forwards and forgets: a stopped target leaves the
        /// asker to time out (exit 4) while harbord keeps serving others.
        @Test func O07_stoppedTargetTimesOutAndHarbordKeepsServing() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let stopped = holder(harbord, "o7.stopped")
            let other = holder(harbord, "o7.other")
            defer {
                kill(stopped.pid, SIGCONT)
                end(stopped)
                end(other)
            }
            kill(stopped.pid, SIGSTOP)
            let start = ContinuousClock.now
            let asked = harbord.harbor(["ports", String(stopped.pid), "--timeout", "1"])
            // Meanwhile harbord answers others at once.
            let list = harbord.harbor(["list", "--timeout", "1"])
            #expect(list.exitCode() == 0, "\(list.stderrSoFar)")
            let answered = harbord.harbor(["ports", String(other.pid), "--timeout", "1"])
            #expect(answered.exitCode() == 0, "\(answered.stderrSoFar)")
            #expect(asked.exitCode() == 4, "\(asked.stderrSoFar)")
            #expect(ContinuousClock.now - start < .seconds(10))
            let again = harbord.harbor(["ports", String(other.pid), "--timeout", "1"])
            #expect(again.exitCode() == 0, "\(again.stderrSoFar)")
        }

        /// O07: a process started with HARBOR_INTROSPECTION=off refuses (exit 5).
        @Test func O07_introspectionCanBeTurnedOff() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let target = holder(harbord, "o7.off", environment: ["HARBOR_INTROSPECTION=off"])
            defer { end(target) }
            let asked = harbord.harbor(["ports", String(target.pid)])
            #expect(asked.waitForStderr("HARBOR_INTROSPECTION=off"), "\(asked.stderrSoFar)")
            #expect(asked.exitCode() == 5, "\(asked.stderrSoFar)")
        }

        /// O07: another uid is refused (exit 5), by harbord on the uid the
        /// kernel reported for the target's session; root may look at any
        /// process; nobody at nobody's; `--all` shows nobody only its own.
        @Test(.requiresRoot("setpriv to another uid"))
        func O07_anotherUidIsRefusedAndRootAllowed() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let rootTarget = holder(harbord, "o7.root")
            let nobodyTarget = holder(harbord, "o7.nobody", asNobody: true)
            defer {
                end(rootTarget)
                end(nobodyTarget)
            }
            let refused = harbord.harbor(["ports", String(rootTarget.pid)], asNobody: true)
            #expect(refused.exitCode() == 5, "\(refused.stderrSoFar)")
            let own = harbord.harbor(["ports", String(nobodyTarget.pid), "--json"], asNobody: true)
            #expect(try jsonLines(own, "ports").count > 0)
            #expect(own.exitCode() == 0, "\(own.stderrSoFar)")
            let root = harbord.harbor(["ports", String(nobodyTarget.pid), "--json"])
            #expect(try jsonLines(root, "ports").count > 0)
            #expect(root.exitCode() == 0, "\(root.stderrSoFar)")
            let all = harbord.harbor(["ports", "--all", "--json"], asNobody: true)
            let pids = Set(try jsonLines(all, "ports").compactMap { $0["pid"] as? Int })
            #expect(all.exitCode() == 0, "\(all.stderrSoFar)")
            #expect(pids == [Int(nobodyTarget.pid)], "\(pids)")
        }

        /// O08: `harbor print` shows a declared name waiting (its queued
        /// messages per uid, look-ups), then held (holder pid, check-ins,
        /// since), by the schema and as two-field lines.
        @Test func O08_printShowsHolderStateQueueAndCounters() throws {
            let harbord = HarbordProcess(policy: "declare o8.declared user=\(getuid()) unit=o8.service\n")
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let port = try client.lookUp("o8.declared")
            try port.send(Message(id: 1), timeout: .seconds(5))
            try port.send(Message(id: 2), timeout: .seconds(5))
            // harbord takes the messages out of the name's port as its loop gets to them.
            var before: [String: Any] = [:]
            let deadline = ContinuousClock.now + .seconds(10)
            repeat {
                let waiting = harbord.harbor(["print", "o8.declared", "--json"])
                before = try jsonLines(waiting, "print").first ?? [:]
                #expect(waiting.exitCode() == 0, "\(waiting.stderrSoFar)")
            } while before["queued"] as? Int != 2 && ContinuousClock.now < deadline
            #expect(before["state"] as? String == "waiting" && before["queued"] as? Int == 2 && before["pid"] is NSNull
                    && before["origin"] as? String == "declared" && before["unit"] as? String == "o8.service"
                    && (before["lookups"] as? Int ?? 0) >= 1, "\(before)")
            let perUid = before["waiting"] as? [[String: Any]] ?? []
            #expect(perUid.count == 1 && perUid.first?["uid"] as? Int == Int(getuid()) && perUid.first?["count"] as? Int == 2)

            let target = holder(harbord, "o8.declared")
            defer { end(target) }
            let held = harbord.harbor(["print", "o8.declared", "--json"])
            let after = try jsonLines(held, "print").first ?? [:]
            #expect(held.exitCode() == 0, "\(held.stderrSoFar)")
            #expect(after["state"] as? String == "active" && after["pid"] as? Int == Int(target.pid)
                    && after["checkins"] as? Int == 1 && after["since"] is Int && after["queued"] is NSNull, "\(after)")

            let human = harbord.harbor(["print", "o8.declared"])
            let lines = human.allStdout().split(separator: "\n")
            #expect(human.exitCode() == 0, "\(human.stderrSoFar)")
            #expect(lines.count >= 11 && lines.allSatisfy { $0.split(whereSeparator: \.isWhitespace).count == 2 }, "\(lines)")
            #expect(lines.contains("pid \(target.pid)"), "\(lines)")
            let none = harbord.harbor(["print", "o8.none"])
            #expect(none.exitCode() == 2, "\(none.stderrSoFar)")
        }

        /// O08: `harbor list --all` lists every uid's names for root; any
        /// other uid is refused (exit 5), and cannot `print` another uid's name.
        @Test(.requiresRoot("setpriv to another uid"))
        func O08_listAllIsRootsAndShowsEveryNamespace() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let nobodys = holder(harbord, "o8.nobodys", asNobody: true)
            let roots = holder(harbord, "o8.roots")
            defer {
                end(nobodys)
                end(roots)
            }
            let mine = harbord.harbor(["list", "--json"])
            #expect(try jsonLines(mine, "list").compactMap { $0["name"] as? String } == ["o8.roots"])
            let all = harbord.harbor(["list", "--all", "--json"])
            let names = try jsonLines(all, "list").map { "\($0["name"] ?? "") \($0["uid"] ?? "")" }
            #expect(all.exitCode() == 0, "\(all.stderrSoFar)")
            #expect(names == ["o8.nobodys 65534", "o8.roots 0"], "\(names)")
            let refused = harbord.harbor(["list", "--all"], asNobody: true)
            #expect(refused.exitCode() == 5, "\(refused.stderrSoFar)")
            let printed = harbord.harbor(["print", "o8.nobodys", "--uid", "65534", "--json"])
            #expect(try jsonLines(printed, "print").first?["pid"] as? Int == Int(nobodys.pid))
            let hidden = harbord.harbor(["print", "o8.roots", "--uid", "0"], asNobody: true)
            #expect(hidden.exitCode() == 2, "\(hidden.stderrSoFar)")
        }
    }
}
