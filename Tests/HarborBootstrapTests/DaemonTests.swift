// Harbor — S04 without a real systemd: harbord's notifications, watchdog, SIGTERM, activation, exit codes.
import Glibc
import Harbor
import HarborBootstrap
import HarborTestSupport
import Testing

extension BootstrapTests {
    @Suite struct DaemonTests {
        /// S04: under a NOTIFY_SOCKET harness, harbord sends READY=1 with a
        /// STATUS= of its counts, pings WATCHDOG=1 at half of WATCHDOG_USEC
        /// from its run loop, updates STATUS= when clients come, and on
        /// SIGTERM sends STOPPING=1, removes its socket and exits 0.
        @Test func S04_harbordNotifiesReadyWatchdogAndStopsCleanlyOnSIGTERM() throws {
            // A function of its own: as a closure, this body crashes Swift 6.3.1's
            // SendNonSendable pass (map::at).
            try expectNoDescriptorLeak { () throws in try notifiesReadyWatchdogAndStops() }
        }

        private func notifiesReadyWatchdogAndStops() throws {
            let scratch = TemporaryDirectory(prefix: "harbor-bs")
            let harness = NotifyHarness()
            let socketPath = scratch.path + "/bootstrap.sock"
            let child = Child(
                ["/bin/sh", "-c", "WATCHDOG_PID=$$ exec \"$0\" --socket \"$1\"", builtExecutable("harbord"), socketPath],
                environment: baseEnvironment() + ["NOTIFY_SOCKET=\(harness.path)", "WATCHDOG_USEC=400000"])
            let ready = harness.collect(before: .now + .seconds(10)) { $0.assignments.contains("READY=1") }
            #expect(ready.last?.assignments == ["READY=1", "STATUS=serving 0 names, 0 clients"], "\(ready.map(\.text))")
            #expect(ready.allSatisfy { $0.pid == child.pid })
            let client = try BootstrapClient(socketPath: socketPath)
            let held = try client.checkIn("counted")
            let running = harness.collect(before: .now + .milliseconds(1100))
            let pings = running.filter { $0.assignments == ["WATCHDOG=1"] }
            #expect(pings.count >= 3, "pings in 1.1 s at a 200 ms period: \(pings.count)")
            #expect(running.contains { $0.text == "STATUS=serving 1 names, 1 clients" }, "\(running.map(\.text))")
            kill(child.pid, SIGTERM)
            let stopping = harness.collect(before: .now + .seconds(10)) { $0.assignments.first == "STOPPING=1" }
            #expect(stopping.last?.assignments.first == "STOPPING=1")
            #expect(child.exitCode() == 0)
            #expect(access(socketPath, F_OK) != 0, "the socket file should be gone")
            _ = held
        }

        /// S04: a wedged run loop stops the watchdog pings (so systemd's
        /// WatchdogSec= would kill and restart harbord).
        @Test func S04_aWedgedLoopStopsTheWatchdogPings() {
            expectNoDescriptorLeak {
                let scratch = TemporaryDirectory(prefix: "harbor-bs")
                let harness = NotifyHarness()
                let child = Child(
                    ["/bin/sh", "-c", "WATCHDOG_PID=$$ exec \"$0\" --socket \"$1\" --debug-wedge-after 0.6",
                     builtExecutable("harbord"), scratch.path + "/bootstrap.sock"],
                    environment: baseEnvironment() + ["NOTIFY_SOCKET=\(harness.path)", "WATCHDOG_USEC=200000"])
                let datagrams = harness.collect(before: .now + .milliseconds(2000))
                let start = datagrams.first?.ms ?? 0
                let pings = datagrams.filter { $0.assignments == ["WATCHDOG=1"] }.map { $0.ms - start }
                #expect(pings.filter { $0 < 550 }.count >= 3, "pings before the wedge: \(pings)")
                #expect(pings.filter { $0 > 900 }.isEmpty, "pings after the wedge: \(pings)")
                kill(child.pid, SIGKILL)
                _ = child.waitForExit()
            }
        }

        /// S04: socket-activated by the real `systemd-socket-activate`
        /// (SOCK_SEQPACKET, FileDescriptorName=bootstrap), harbord serves
        /// the passed socket and says READY=1.
        @Test func S04_socketActivatedHarbordServesThePassedSocket() throws {
            try expectNoDescriptorLeak { () throws in
                let scratch = TemporaryDirectory(prefix: "harbor-bs")
                let harness = NotifyHarness()
                let socketPath = scratch.path + "/activated.sock"
                // systemd-socket-activate gives harbord only the variables named
                // with -E: hand on the sanitizers' options (Scripts/sanitizers.sh).
                let sanitizerOptions = baseEnvironment().filter { $0.contains("SAN_OPTIONS=") }.flatMap { ["-E", $0] }
                let child = Child(
                    ["/usr/bin/systemd-socket-activate", "--seqpacket", "-l", socketPath, "--fdname=bootstrap",
                     "-E", "NOTIFY_SOCKET=\(harness.path)"] + sanitizerOptions + [builtExecutable("harbord")],
                    environment: baseEnvironment())
                #expect(child.waitForStderr("Listening on"), "systemd-socket-activate: \(child.stderrSoFar)")
                // systemd-socket-activate starts harbord on the first connection.
                let client = try BootstrapClient(socketPath: socketPath, timeout: .seconds(10))
                let held = try client.checkIn("activated")
                #expect(try client.list().map(\.name) == ["activated"])
                let ready = harness.collect(before: .now + .seconds(5)) { $0.assignments.contains("READY=1") }
                #expect(ready.last?.assignments.first == "READY=1")
                #expect(child.waitForStderr("socket-activated: serving the passed socket bootstrap"))
                kill(child.pid, SIGTERM)
                #expect(child.exitCode() == 0)
                _ = held
            }
        }

        /// S04: start-up failures are one line each with a documented exit
        /// status: a bad policy file (78, with its line numbers), a socket
        /// path it cannot use (71), a wrong option (64).
        @Test func S04_startUpFailuresExitWithDocumentedCodes() {
            expectNoDescriptorLeak {
                let scratch = TemporaryDirectory(prefix: "harbor-bs")
                let policy = scratch.write("bad.conf", "shared ok owner=0\nshared bad owner=root\n")
                let badPolicy = Child([builtExecutable("harbord"), "--socket", scratch.path + "/a.sock", "--policy", policy],
                                      environment: baseEnvironment())
                #expect(badPolicy.exitCode() == 78)
                #expect(badPolicy.waitForStderr("bad.conf:2: owner= must be a numeric uid"))
                let file = scratch.write("not-a-socket", "x")
                let badSocket = Child([builtExecutable("harbord"), "--socket", file], environment: baseEnvironment())
                #expect(badSocket.exitCode() == 71)
                #expect(badSocket.waitForStderr("exists and is not a socket"))
                let badOption = Child([builtExecutable("harbord"), "--sockett", "x"], environment: baseEnvironment())
                #expect(badOption.exitCode() == 64)
            }
        }

        /// S04: the CLI's wrong arguments give one line on stderr and exit 64.
        @Test func S04_cliWrongArgumentsGiveOneLineAndExit64() {
            expectNoDescriptorLeak {
                for arguments in [["lookup"], ["frob"], ["ping", "x", "--count", "0"], ["send", "x", "--id", "nine"]] {
                    let child = Child([builtExecutable("harbor")] + arguments, environment: baseEnvironment())
                    #expect(child.exitCode() == 64, "\(arguments)")
                    _ = child.waitFor("\u{0}", on: child.stderrDescriptor, before: .now + .seconds(5))
                    let lines = child.stderrSoFar.split(separator: "\n")
                    #expect(lines.count == 1 && lines[0].hasPrefix("harbor: "), "\(arguments): \(child.stderrSoFar)")
                }
                let unreachable = Child([builtExecutable("harbor"), "lookup", "x", "--socket", "/tmp/harbor-none/b.sock"],
                                        environment: baseEnvironment())
                #expect(unreachable.exitCode() == 3)
            }
        }
    }
}
