// Harbor — S05: operating a running harbord: signals, configuration checks, reloads, versions.
import Foundation
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct OperationsTests {
        /// S05: SIGUSR1 sent to a production harbord is harmless: it logs
        /// its status line and keeps serving (a look-up succeeds after), and
        /// SIGTERM still stops it with exit 0. (The wedge the watchdog tests
        /// need takes the hidden `--debug-wedge-on-sigusr1`.)
        @Test func S05_sigusr1LeavesHarbordServingAndSIGTERMStopsIt() throws {
            try expectNoDescriptorLeak { () throws in try sigusr1LeavesHarbordServing() }
        }

        private func sigusr1LeavesHarbordServing() throws {
            let harbord = HarbordProcess()
            defer { if harbord.child.waitForExit(before: .now) == nil { kill(harbord.child.pid, SIGKILL); harbord.child.waitForExit() } }
            #expect(harbord.waitUntilReady())
            let holder = try BootstrapClient(socketPath: harbord.socketPath, timeout: .seconds(3))
            let held = try holder.checkIn("usr1.check")
            kill(harbord.child.pid, SIGUSR1)
            #expect(harbord.child.waitForStderr("SIGUSR1: serving 1 names", before: .now + .seconds(5)),
                    "\(harbord.child.stderrSoFar)")
            // Give a wedge (the old behaviour) time to take the loop.
            usleep(300_000)
            let asker = try BootstrapClient(socketPath: harbord.socketPath, timeout: .seconds(3))
            #expect(throws: Never.self) { _ = try asker.lookUp("usr1.check") }
            kill(harbord.child.pid, SIGTERM)
            #expect(harbord.child.exitCode(before: .now + .seconds(5)) == 0)
            _ = held
        }
    
        /// S05: `harbord --check-config FILE` exits 0 with one line for a
        /// valid policy, and 78 with every problem (FILE:LINE: message) for
        /// a bad one, without listening anywhere.
        @Test func S05_checkConfigExitsZeroOrSeventyEightWithEveryProblem() {
            expectNoDescriptorLeak {
                let scratch = TemporaryDirectory(prefix: "harbor-bs")
                let good = scratch.write("good.conf", "shared a owner=0\ndeclare b user=0 unit=b.service\n")
                let valid = Child([builtExecutable("harbord"), "--check-config", good], environment: baseEnvironment())
                #expect(valid.exitCode() == 0, "\(valid.stderrSoFar)")
                #expect(valid.allStdout() == "\(good): valid, 2 declared names (1 shared)\n")
                let bad = scratch.write("bad.conf", "shared ok owner=0\nshared x owner=root\nfrob y\nshared ok owner=0\n")
                let invalid = Child([builtExecutable("harbord"), "--check-config", bad], environment: baseEnvironment())
                #expect(invalid.exitCode() == 78)
                _ = invalid.waitForStderr("\u{0}never", before: .now + .seconds(2))
                let lines = invalid.stderrSoFar.split(separator: "\n")
                #expect(lines.count == 3, "\(invalid.stderrSoFar)")
                #expect(lines.first?.hasPrefix("\(bad):2: ") == true && lines.dropFirst().first?.hasPrefix("\(bad):3: ") == true
                        && lines.last?.hasPrefix("\(bad):4: ") == true, "\(invalid.stderrSoFar)")
                let missing = Child([builtExecutable("harbord"), "--check-config", scratch.path + "/none.conf"],
                                    environment: baseEnvironment())
                #expect(missing.exitCode() == 78)
            }
        }

        /// S05: `harbor --version` and `harbord --version` print the one
        /// version string (`HarborVersion.string`) and exit 0.
        @Test func S05_bothExecutablesPrintTheOneVersion() {
            expectNoDescriptorLeak {
                for executable in ["harbor", "harbord"] {
                    let child = Child([builtExecutable(executable), "--version"], environment: baseEnvironment())
                    #expect(child.exitCode() == 0, "\(executable): \(child.stderrSoFar)")
                    #expect(child.allStdout() == HarborVersion.string + "\n", "\(executable)")
                }
            }
        }

        /// S05: `harbor list --json` prints one JSON object a line of
        /// {name, scope, uid, state, pid, unit} (the schema of
        /// Docs/harbord.md); the human
        /// listing's SCOPE is one field (`user:0`, `shared`).
        @Test func S05_listJSONFollowsTheSchemaAndColumnsSplit() throws {
            try expectNoDescriptorLeak { () throws in try listJSONFollowsTheSchema() }
        }

        private func listJSONFollowsTheSchema() throws {
            let harbord = HarbordProcess(policy: "shared common owner=0 unit=common.service\n")
            defer { _ = harbord.stop() }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let held = try client.checkIn("mine.json")
            let empty = harbord.harbor(["list", "--json"], asNobody: false)
            let printed = empty.allStdout()
            #expect(empty.exitCode() == 0, "\(empty.stderrSoFar)")
            #expect(printed.utf8.allSatisfy { $0 == 0x0A || (0x20...0x7E).contains($0) }, "\(printed)")
            let objects = try printed.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(printed)")
            }
            #expect(objects.count == 2)
            for object in objects {
                #expect(Set(object.keys) == ["name", "scope", "uid", "state", "pid", "unit"], "\(object)")
            }
            let common = try #require(objects.first { $0["name"] as? String == "common" })
            #expect(common["scope"] as? String == "shared" && common["uid"] is NSNull && common["state"] as? String == "waiting"
                    && common["pid"] is NSNull && common["unit"] as? String == "common.service", "\(common)")
            let mine = try #require(objects.first { $0["name"] as? String == "mine.json" }, "\(objects)")
            #expect(mine["scope"] as? String == "user:\(getuid())" && mine["uid"] as? Int == Int(getuid()) && mine["state"] as? String == "active"
                    && mine["pid"] as? Int == Int(getpid()) && mine["unit"] is NSNull, "\(mine)")

            let human = harbord.harbor(["list"])
            let rows = human.allStdout().split(separator: "\n").map { $0.split(whereSeparator: \.isWhitespace) }
            #expect(human.exitCode() == 0)
            #expect(rows.count == 3 && rows.allSatisfy { $0.count == 5 }, "\(rows)")
            #expect(rows.contains { $0.first == "common" && $0[1] == "shared" && $0[4] == "common.service" }, "\(rows)")
            #expect(rows.contains { $0[1] == "user:\(getuid())" && $0[3] == "\(getpid())" }, "\(rows)")
            _ = held
        }
    
        /// S05: a non-root harbord that cannot write its socket's directory
        /// (no XDG_RUNTIME_DIR, so the system socket) exits 71 with a hint:
        /// set XDG_RUNTIME_DIR or pass --socket.
        @Test(.requiresRoot("to run harbord as nobody")) func S05_unwritableSocketDirectoryGivesAHint() {
            expectNoDescriptorLeak {
                let scratch = TemporaryDirectory(prefix: "harbor-bs")
                let copy = scratch.copy(builtExecutable("harbord"), as: "harbord")
                let environment = baseEnvironment().filter { !$0.hasPrefix("XDG_RUNTIME_DIR=") }
                let child = Child(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", copy, "--foreground"],
                                  environment: environment)
                #expect(child.exitCode() == 71)
                #expect(child.waitForStderr("set XDG_RUNTIME_DIR"), "\(child.stderrSoFar)")
                #expect(child.stderrSoFar.contains("or pass --socket PATH"), "\(child.stderrSoFar)")
            }
        }

        /// S05: `--verbose` logs harbord's own events, not the service
        /// group's internals (`Logger(_storage: …)`), and "stopped" once.
        @Test func S05_verboseLogsOnlyHarbordsEventsAndStoppedOnce() {
            expectNoDescriptorLeak {
                let harbord = HarbordProcess(extraArguments: ["--verbose"])
                #expect(harbord.waitUntilReady())
                #expect(harbord.stop() == 0)
                _ = harbord.child.waitForStderr("\u{0}never", before: .now + .seconds(2))
                let log = harbord.child.stderrSoFar
                #expect(!log.contains("Logger(") && !log.contains("_storage"), "\(log)")
                #expect(log.components(separatedBy: "] info: stopped").count == 2, "\(log)")
            }
        }
    
        /// S05: SIGHUP reloads the policy file: a good file takes effect (a
        /// new declared name waits, a dropped one nobody holds goes, a
        /// dropped one a service holds stays with it); a bad file keeps the
        /// running policy and logs every problem.
        @Test func S05_sighupReloadsAGoodPolicyAndKeepsTheRunningOneOnABadFile() throws {
            try expectNoDescriptorLeak { () throws in try sighupReloads() }
        }

        private func sighupReloads() throws {
            let harbord = HarbordProcess(policy: "shared kept owner=0\nshared dropped owner=0\ndeclare held user=\(getuid())\n")
            defer { if harbord.child.waitForExit(before: .now) == nil { kill(harbord.child.pid, SIGKILL); harbord.child.waitForExit() } }
            #expect(harbord.waitUntilReady())
            let client = try harbord.client()
            let held = try client.checkIn("held")
            let policyFile = harbord.directory.path + "/policy.conf"
            _ = harbord.directory.write("policy.conf", "shared kept owner=0\nshared added owner=0 unit=added.service\n")
            kill(harbord.child.pid, SIGHUP)
            #expect(harbord.child.waitForStderr("SIGHUP: reloaded \(policyFile): 2 declared names, 3 changed"),
                    "\(harbord.child.stderrSoFar)")
            let afterGood = try client.list()
            #expect(afterGood.map(\.name).sorted() == ["added", "held", "kept"], "\(afterGood)")
            #expect(afterGood.first { $0.name == "added" }?.unit == "added.service")
            #expect(afterGood.first { $0.name == "held" }?.state == .active)

            _ = harbord.directory.write("policy.conf", "shared kept owner=0\nshared bad owner=root\nfrob\n")
            kill(harbord.child.pid, SIGHUP)
            #expect(harbord.child.waitForStderr("\(policyFile):3: "), "\(harbord.child.stderrSoFar)")
            #expect(harbord.child.stderrSoFar.contains("keeping the running policy"))
            #expect(harbord.child.stderrSoFar.contains("\(policyFile):2: owner= must be a numeric uid"))
            #expect(try client.list().map(\.name).sorted() == ["added", "held", "kept"])
            #expect(harbord.stop() == 0)
            _ = held
        }
    }
}
