// HarborDistributed tests — the clock example as a distributed actor
// (Examples/ClockActorService, Examples/ClockActorClient) run as real processes (X20).
import Glibc
import HarborTestSupport
import Testing

extension DistributedTests {
    @Suite struct ClockActorExample {
        /// X20: the clock actor, served by name by one process and resolved
        /// by that name from others, answers typed calls, calls a
        /// subscriber's actor each second, and its death (SIGKILL) reaches
        /// a pending caller as `deadActor`, at once.
        @Test func X20_theClockActorAnswersAnotherProcessAndItsDeathIsAnError() throws {
            let harbord = PrivateHarbord()
            let name = "com.example.x20"
            let service = Child([builtExecutable("clock-actor-service"), name], environment: harbord.clientEnvironment)
            #expect(service.waitForStdout("ready \(name) \(service.pid)"), "clock-actor-service: \(service.stderrSoFar)")
            func client(_ arguments: String...) -> Child {
                Child([builtExecutable("clock-actor-client"), "--name", name] + arguments, environment: harbord.clientEnvironment)
            }

            let now = client("now").allStdout()
            #expect(now.hasPrefix("now ") && now.hasSuffix(" from pid \(service.pid)\n"), "now: \(now)")
            let ticks = client("subscribe", "2")
            let lines = ticks.allStdout().split(separator: "\n")
            #expect(lines.count == 2 && lines.allSatisfy { $0.hasPrefix("tick ") && $0.hasSuffix(" from pid \(service.pid)") },
                    "subscribe 2: \(lines)")

            let alarm = client("alarm", "60")
            usleep(300_000)                                            // the call is pending
            #expect(alarm.waitForExit(before: .now) == nil, "the alarm rang early: \(alarm.stdoutSoFar)")
            let killed = ContinuousClock.now
            kill(service.pid, SIGKILL)
            let said = alarm.allStdout()
            let took = ContinuousClock.now - killed
            #expect(said.hasPrefix("error dead actor"), "the pending call: \(said)")
            #expect(alarm.exitCode() == 1)
            #expect(took < .seconds(2), "the caller heard of the death \(took) after SIGKILL")
            print("X20: the pending call's client printed its error \(took) after SIGKILL (process start and exit included)")
            _ = service.waitForExit()
            #expect(client("now").allStdout().hasPrefix("error actor not found"), "the name went with its process")
        }
    }
}
