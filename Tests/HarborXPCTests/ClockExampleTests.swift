// HarborXPC tests — the clock example (Examples/ClockService, Examples/ClockClient)
// run as real processes (X19).
import ClockInterface
import Glibc
import HarborTestSupport
import Testing

extension XPCTests {
    @Suite struct ClockExample {
        /// clock-service checked in as `name` with this test's harbord, once it says it is ready.
        static func service(_ harbord: PrivateHarbord, _ name: String) -> Child {
            let service = Child([builtExecutable("clock-service"), "--name", name], environment: harbord.clientEnvironment)
            #expect(service.waitForStdout("ready \(name) \(service.pid)"), "clock-service did not start: \(service.stderrSoFar)")
            return service
        }

        /// clock-client `arguments` against `name`, started.
        static func client(_ harbord: PrivateHarbord, _ name: String, _ arguments: String...) -> Child {
            Child([builtExecutable("clock-client"), "--name", name] + arguments, environment: harbord.clientEnvironment)
        }

        /// X19: the example service answers `now` from another process
        /// (the kernel names its pid) and sends a subscriber a tick each
        /// second until the subscriber goes away, which the service sees.
        @Test func X19_theClockExampleAnswersNowAndTicksUntilTheClientGoes() throws {
            let harbord = PrivateHarbord()
            let service = Self.service(harbord, "com.example.x19")
            let now = Self.client(harbord, "com.example.x19", "now").allStdout()
            #expect(now.hasPrefix("now ") && now.hasSuffix(" from pid \(service.pid)\n"), "clock-client now: \(now)")

            let start = ContinuousClock.now
            let ticks = Self.client(harbord, "com.example.x19", "subscribe", "3")
            let lines = ticks.allStdout().split(separator: "\n")
            let took = ContinuousClock.now - start
            #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("tick ") && $0.hasSuffix(" from pid \(service.pid)") },
                    "clock-client subscribe 3: \(lines)")
            #expect(took >= .milliseconds(1500), "3 ticks a second apart took \(took)")
            #expect(ticks.exitCode() == 0)
            #expect(service.waitForStderr("1 subscribers\n0 subscribers\n", before: .now + .seconds(5)),
                    "the service did not see its subscriber come and go: \(service.stderrSoFar)")
        }

        /// X19: a client of another uid finds the service's shared name and
        /// is refused by its peer requirement (its own uid) with a typed error.
        @Test(.requiresRoot("to run the client as nobody"))
        func X19_aClientOfAnotherUidIsRefusedByThePeerRequirement() throws {
            let harbord = PrivateHarbord(policy: "shared com.example.x19b owner=0\n")
            let service = Self.service(harbord, "com.example.x19b")
            let nobody = Child(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                harbord.reachableCopy(of: "clock-client"), "--name", "com.example.x19b", "now"],
                               environment: harbord.clientEnvironment)
            let said = nobody.allStdout()
            #expect(said.hasPrefix("error peerRequirementNotMet "), "nobody's call: \(said)")
            #expect(nobody.exitCode() == 1)
            #expect(Self.client(harbord, "com.example.x19b", "now").allStdout().hasSuffix(" from pid \(service.pid)\n"), "root's call")
        }

        /// X19: a SIGKILLed service fails the client's pending call with
        /// `connectionInterrupted` within 10 ms of the `kill` (the median of
        /// five; the client prints the wall-clock time of the error) and of
        /// the service's exit as the client's pidfd on it reports it; none
        /// later than 100 ms.
        @Test func X19_aKilledServiceFailsThePendingCallWithin10ms() throws {
            let harbord = PrivateHarbord()
            var figures: [Double] = [], fromKill: [Double] = []
            for _ in 0..<5 {
                let service = Self.service(harbord, "com.example.x19c")
                let alarm = Self.client(harbord, "com.example.x19c", "alarm", "60")
                usleep(300_000)                                        // the alarm is pending
                #expect(alarm.waitForExit(before: .now) == nil, "the alarm rang early: \(alarm.stdoutSoFar)")
                let killed = ClockTime.current()
                kill(service.pid, SIGKILL)
                let said = alarm.allStdout()
                _ = service.waitForExit()
                // "error connectionInterrupted after MS ms from pid P's exit, at S.N: reason"
                let words = said.split(separator: " ")
                let figure = said.hasPrefix("error connectionInterrupted after ") ? Double(words[3]) : nil
                let at = words.firstIndex(of: "at").flatMap { Double(words[$0 + 1].dropLast()) }
                #expect(figure != nil && at != nil, "the pending alarm: \(said)")
                figures.append(figure ?? .infinity)
                let sent = Double(killed.seconds) + Double(killed.nanoseconds) / 1e9
                fromKill.append(((at ?? .infinity) - sent) * 1000)
            }
            print("X19: pending call failed \(fromKill) ms after kill(SIGKILL), \(figures) ms after the service's exit (its pidfd)")
            // The median of five, from the kill and from the exit (a loaded
            // machine delays a thread now and then: one of five at 10.5 ms,
            // and one at 14.0 ms, were seen under a load of 10-15 on 2
            // CPUs), and none near a timeout.
            // Under a sanitizer (Scripts/sanitizers.sh: every thread and
            // system call slowed several times over) the bound is ten times.
            let underSanitizer = getenv("ASAN_OPTIONS") != nil || getenv("TSAN_OPTIONS") != nil
            let bound: Double = underSanitizer ? 100 : 10
            let median = fromKill.sorted()[2]
            #expect(median <= bound, "the median is not within \(bound) ms of the kill: \(fromKill)")
            #expect(fromKill.allSatisfy { $0 <= 10 * bound }, "a call failed late: \(fromKill)")
            #expect(figures.sorted()[2] <= bound, "the median is not within \(bound) ms of the exit: \(figures)")
        }

        /// S06 without a real systemd: under a NOTIFY_SOCKET harness the
        /// example service says READY=1 once its listener serves (a client
        /// is answered right after), pings WATCHDOG=1 at half WATCHDOG_USEC
        /// from its main run loop, tells its subscriber count in STATUS=,
        /// and on SIGTERM says STOPPING=1 and exits 0.
        @Test func S06_theClockServiceNotifiesReadyWatchdogAndStopsOnSIGTERM() throws {
            let harbord = PrivateHarbord()
            let harness = NotifyHarness()
            let service = Child(["/bin/sh", "-c", "WATCHDOG_PID=$$ exec \"$0\" --name com.example.s06", builtExecutable("clock-service")],
                                environment: harbord.clientEnvironment + ["NOTIFY_SOCKET=\(harness.path)", "WATCHDOG_USEC=400000"])
            let ready = harness.collect(before: .now + .seconds(10)) { $0.assignments.contains("READY=1") }
            #expect(ready.last?.assignments == ["READY=1", "STATUS=serving com.example.s06"], "\(ready.map(\.text))")
            #expect(ready.allSatisfy { $0.pid == service.pid })
            #expect(Self.client(harbord, "com.example.s06", "now").allStdout().hasSuffix(" from pid \(service.pid)\n"))
            let running = harness.collect(before: .now + .milliseconds(1500))
            let pings = running.filter { $0.assignments == ["WATCHDOG=1"] }
            #expect(pings.count >= 4, "pings in 1.5 s at a 200 ms period: \(pings.count)")
            #expect(running.contains { $0.text == "STATUS=serving com.example.s06 to 0 subscribers" }, "\(running.map(\.text))")
            kill(service.pid, SIGTERM)
            let stopping = harness.collect(before: .now + .seconds(10)) { $0.assignments.first == "STOPPING=1" }
            #expect(stopping.last?.assignments.first == "STOPPING=1", "\(stopping.map(\.text))")
            #expect(service.exitCode() == 0)
        }
    }
}
