// Harbor — O10: `harbor monitor NAME` and `harbor capture NAME -w FILE`, the holder's tap reached through
// harbord: every message the name's port admits, for root and the holder's uid only.
import Foundation
import Glibc
import HarborBootstrap
import HarborPorts
import HarborSystem
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct MonitorTests {
        private func jsonLines(_ child: Child, _ command: String) throws -> [[String: Any]] {
            try JSONSchemaCheck.objects(printedBy: child, command: command)
        }

        /// O10: the holder's port's admissions reach `harbor monitor` as they
        /// happen: a message sent in the holder's process, one from another
        /// process (`harbor send`, admitted as the holder receives it) and
        /// one carrying a right, each with its id, size, kernel-verified
        /// sender, rights and body prefix; JSON by the schema, and human
        /// lines whose fields split on whitespace.
        @Test func O10_monitorShowsEachMessageTheNamesPortAdmits() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let port = try client.checkIn("o10.watched")
            let monitor = harbord.harbor(["monitor", "o10.watched", "--json", "--count", "3", "--body-prefix", "8"])
            #expect(monitor.waitForStdout(#""event":"monitoring""#), "\(monitor.stderrSoFar)")
            let service = try client.lookUp("o10.watched")
            try service.send(Message(id: 7, body: Array("seven".utf8)), timeout: .seconds(5))
            _ = try port.receive(timeout: .seconds(5))
            let sender = harbord.harbor(["send", "o10.watched", "from another process", "--id", "8"])
            #expect(sender.exitCode() == 0, "\(sender.stderrSoFar)")
            _ = try port.receive(timeout: .seconds(5))
            var third = Message(id: 9, body: [1, 2, 3])
            third.attach(port.makeSendRight())
            try service.send(third, timeout: .seconds(5))
            _ = try port.receive(timeout: .seconds(5))

            let events = try jsonLines(monitor, "monitor")
            #expect(monitor.exitCode() == 0, "\(monitor.stderrSoFar)")
            #expect(events.count == 4, "\(events)")
            guard events.count == 4 else { return }
            #expect(events[0]["event"] as? String == "monitoring" && events[0]["pid"] as? Int == Int(getpid())
                    && events[0]["port"] as? Int == Int(port.name.rawValue), "\(events[0])")
            #expect(events[1]["id"] as? Int == 7 && events[1]["size"] as? Int == 5 && events[1]["pid"] as? Int == Int(getpid())
                    && events[1]["hex"] as? String == "736576656e" && events[1]["send"] as? Int == 0, "\(events[1])")
            #expect(events[2]["id"] as? Int == 8 && events[2]["size"] as? Int == 20 && events[2]["pid"] as? Int == Int(sender.pid)
                    && events[2]["uid"] as? Int == Int(getuid()) && events[2]["hex"] as? String == "66726f6d20616e6f",
                    "\(events[2])")
            #expect(events[3]["id"] as? Int == 9 && events[3]["send"] as? Int == 1 && events[3]["hex"] as? String == "010203",
                    "\(events[3])")

            let human = harbord.harbor(["monitor", "o10.watched", "--count", "1"])
            #expect(human.waitForStdout("monitoring o10.watched pid \(getpid()) port"), "\(human.stderrSoFar)")
            try service.send(Message(id: 11, body: Array("hi".utf8)), timeout: .seconds(5))
            _ = try port.receive(timeout: .seconds(5))
            let lines = human.allStdout().split(separator: "\n")
            #expect(human.exitCode() == 0, "\(human.stderrSoFar)")
            let fields = lines.last?.split(separator: " ").map(String.init) ?? []
            #expect(lines.count == 2 && fields.count == 14 && fields[1...9] == ["id", "11", "size", "2", "from", "pid", "\(getpid())", "uid", "\(getuid())"]
                    && fields.suffix(2) == ["hex", "6869"], "\(lines)")
        }

        /// O10: the monitor ends with the name's port (the holder's summary:
        /// `ended`, exit 0) and with the holder's process (its right to the
        /// monitor's port goes: exit 3 within seconds, not at a timeout).
        @Test func O10_theMonitorEndsWithTheNamesPortOrTheHolder() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            var port: ReceiveRight? = try client.checkIn("o10.ends")
            let monitor = harbord.harbor(["monitor", "o10.ends", "--json", "--seconds", "60"])
            #expect(monitor.waitForStdout(#""event":"monitoring""#), "\(monitor.stderrSoFar)")
            try client.lookUp("o10.ends").send(Message(id: 1), timeout: .seconds(5))
            #expect(monitor.waitForStdout(#""event":"message""#), "\(monitor.stderrSoFar)")
            port = nil
            let events = try jsonLines(monitor, "monitor")
            #expect(monitor.exitCode(before: .now + .seconds(10)) == 0, "\(monitor.stderrSoFar)")
            #expect(events.last?["event"] as? String == "ended" && events.last?["admitted"] as? Int == 1
                    && events.last?["dropped"] as? Int == 0, "\(events)")
            _ = port

            let holder = harbord.harbor(["watch", "o10.killed", "--quiet"])
            #expect(holder.waitForStdout("watching"), "\(holder.stderrSoFar)")
            let orphan = harbord.harbor(["monitor", "o10.killed", "--seconds", "60"])
            #expect(orphan.waitForStdout("monitoring"), "\(orphan.stderrSoFar)")
            kill(holder.pid, SIGKILL)
            _ = holder.waitForExit()
            let killed = ContinuousClock.now
            #expect(orphan.exitCode(before: .now + .seconds(10)) == 3, "\(orphan.stderrSoFar)")
            #expect(ContinuousClock.now - killed < .seconds(10))
            #expect(orphan.waitForStderr("stopped forwarding"), "\(orphan.stderrSoFar)")
        }

        /// O10: the name server lets root and the holder's uid (as the kernel
        /// reported it) monitor a name, and refuses another uid (exit 5),
        /// even for a shared name it can see; root may name another uid's.
        @Test(.requiresRoot("setpriv to another uid"))
        func O10_onlyRootAndTheHoldersUidMayMonitor() throws {
            let harbord = HarbordProcess(policy: "shared o10.shared owner=0\n")
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let shared = try client.checkIn("o10.shared")
            let refused = harbord.harbor(["monitor", "o10.shared", "--seconds", "5"], asNobody: true)
            #expect(refused.exitCode() == 5, "\(refused.stderrSoFar)")
            #expect(refused.waitForStderr("only that uid and root"), "\(refused.stderrSoFar)")

            let nobodys = harbord.harbor(["watch", "o10.nobodys", "--quiet"], asNobody: true)
            defer {
                kill(nobodys.pid, SIGKILL)
                _ = nobodys.waitForExit()
            }
            #expect(nobodys.waitForStdout("watching"), "\(nobodys.stderrSoFar)")
            let own = harbord.harbor(["monitor", "o10.nobodys", "--seconds", "1"], asNobody: true)
            #expect(own.waitForStdout("monitoring o10.nobodys pid \(nobodys.pid)"), "\(own.stderrSoFar)")
            #expect(own.exitCode() == 0, "\(own.stderrSoFar)")
            let root = harbord.harbor(["monitor", "o10.nobodys", "--uid", "65534", "--seconds", "1"])
            #expect(root.waitForStdout("monitoring o10.nobodys pid \(nobodys.pid)"), "\(root.stderrSoFar)")
            #expect(root.exitCode() == 0, "\(root.stderrSoFar)")
            _ = shared
        }

        /// O10: a holder forwards to at most four monitors at once (each a
        /// thread, a connection and a bounded tap, paid by root's or the
        /// holder's own uid); the fifth is refused `busy`, and a monitor's
        /// place frees once its port dies.
        @Test func O10_aHolderForwardsToAtMostFourMonitors() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let port = try client.checkIn("o10.many")
            var monitors: [HeldReceiveRight] = []
            for _ in 0..<4 {
                let monitor = HeldReceiveRight()
                _ = try client.monitor("o10.many", bodyPrefix: 0, sendingTo: monitor.right.makeSendRight())
                monitors.append(monitor)
            }
            let fifth = ReceiveRight()
            #expect(throws: BootstrapError.self) {
                try client.monitor("o10.many", bodyPrefix: 0, sendingTo: fifth.makeSendRight())
            }
            do {
                _ = try client.monitor("o10.many", bodyPrefix: 0, sendingTo: fifth.makeSendRight())
            } catch {
                #expect(error.code == .busy, "\(error)")
            }
            monitors.removeFirst()
            let freed = pollUntil(timeout: .seconds(5), every: .milliseconds(100)) {
                (try? client.monitor("o10.many", bodyPrefix: 0, sendingTo: fifth.makeSendRight())) != nil
            }
            #expect(freed)
            _ = port
        }

        /// O10: the records go only to the asker's own process: a monitor
        /// request naming another process's port is refused, and that
        /// port hears nothing from the holder.
        @Test func O10_recordsGoOnlyToTheAskersOwnProcess() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let port = try client.checkIn("o10.mine")
            let elsewhere = harbord.harbor(["watch", "o10.elsewhere", "--json"])
            defer {
                kill(elsewhere.pid, SIGKILL)
                _ = elsewhere.waitForExit()
            }
            #expect(elsewhere.waitForStdout("watching"), "\(elsewhere.stderrSoFar)")
            let victim = try client.lookUp("o10.elsewhere")
            do {
                _ = try client.monitor("o10.mine", bodyPrefix: 0, sendingTo: victim)
                Issue.record("a monitor request with another process's port was served")
            } catch {
                #expect(error.code == .badRequest, "\(error)")
            }
            try client.lookUp("o10.mine").send(Message(id: 5), timeout: .seconds(5))
            _ = try port.receive(timeout: .seconds(5))
            #expect(!elsewhere.waitForStdout(#""event":"message""#, before: .now + .milliseconds(700)), "\(elsewhere.stdoutSoFar)")
        }

        /// O10: `harbor capture` writes the records as pcapng while they
        /// arrive, and the real tshark with the repository's dissector reads
        /// back each message's id, size and sender.
        @Test(.enabled(if: Tshark.path != nil, "tshark is not installed (Scripts/install-deps.sh installs it)"))
        func O10_captureWritesPcapngThatTsharkReads() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let directory = TemporaryDirectory()
            let file = directory.path + "/o10.pcapng"
            let client = try harbord.client()
            let port = try client.checkIn("o10.captured")
            let capture = harbord.harbor(["capture", "o10.captured", "-w", file, "--count", "2", "--json"])
            #expect(capture.waitForStderr("capturing o10.captured"), "\(capture.stderrSoFar)")
            let service = try client.lookUp("o10.captured")
            try service.send(Message(id: 21, body: Array("twenty-one".utf8)), timeout: .seconds(5))
            try service.send(Message(id: 22, body: [UInt8](repeating: 0xAB, count: 1000)), timeout: .seconds(5))
            _ = try port.receive(timeout: .seconds(5))
            _ = try port.receive(timeout: .seconds(5))
            let summary = try jsonLines(capture, "capture")
            #expect(capture.exitCode() == 0, "\(capture.stderrSoFar)")
            #expect(summary.first?["packets"] as? Int == 2 && summary.first?["pid"] as? Int == Int(getpid()), "\(summary)")
            let rows = try Tshark.fields(file, ["harbor.id", "harbor.size", "harbor.sender_pid"])
            #expect(rows == [["21", "10", "\(getpid())"], ["22", "1000", "\(getpid())"]], "\(rows)")
        }

        /// O10: a capture the holder never starts (no such name) fails
        /// without making its file: the holder is asked before the file is
        /// created.
        @Test func O10_aRefusedCaptureLeavesNoFile() throws {
            let harbord = HarbordProcess()
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let directory = TemporaryDirectory()
            let file = directory.path + "/refused.pcapng"
            let capture = harbord.harbor(["capture", "o10.nobody-holds-this", "-w", file, "--seconds", "2"])
            #expect(capture.exitCode() != 0, "\(capture.stderrSoFar)")
            #expect(access(file, F_OK) != 0, "the refused capture made \(file)")
        }
    }
}

/// A receive right kept in an array (which cannot hold `~Copyable` values).
private final class HeldReceiveRight {
    let right = ReceiveRight()
}
