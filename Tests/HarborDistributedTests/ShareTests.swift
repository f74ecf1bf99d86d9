// HarborDistributed tests — whoever asks pays: running calls per caller uid (D06).
import Distributed
import Glibc
import HarborDistributed
import HarborDistributedProbe
import HarborTestSupport
import Testing

extension PrivateHarbord {
    /// harbor-actor-probe `COMMAND NAME N` (`call` or `flood`), started.
    func probe(_ command: String, _ name: String, _ n: Int) -> Child {
        Child([builtExecutable("harbor-actor-probe"), command, name, "\(n)"],
              environment: baseEnvironment() + ["HARBOR_BOOTSTRAP=\(socketPath)"])
    }
}

extension DistributedTests {
    @Suite struct Shares {
        /// D06: each call runs as a task of the hosting system until it
        /// answers, charged to its sender's uid (whichever of its processes
        /// sends it). A uid past its share of running calls is answered
        /// `busy` at once, unrun; the share is free again once the calls
        /// answered.
        @Test func D06_aUidKeepsAtMostItsShareOfCallsRunning() async throws {
            let harbord = PrivateHarbord()
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let counter = ProbeCounter(actorSystem: system)
            try system.serve(counter, as: "com.example.d06")

            let extra = 3
            let flood = harbord.probe("flood", "com.example.d06", HarborActorSystem.runningCallsPerUid + extra)
            #expect(flood.waitForStdout("busy \(extra)\n"),
                    "calls past the uid's share are refused at once: \(flood.stdoutSoFar) \(flood.stderrSoFar)")
            #expect(!flood.stdoutSoFar.contains("answered"), "the calls in its share are still running")

            // Another process of the same uid pays from the same share.
            let refused = harbord.probe("call", "com.example.d06", 10)
            #expect(refused.allStdout().hasPrefix("error busy"), "the uid's share is full, whichever process asks")

            // The slow calls answer; the uid's next calls find its share free.
            try await counter.open()
            #expect(flood.waitForStdout("total 1\n"), "the share is free again: \(flood.stdoutSoFar)")
            #expect(flood.stdoutSoFar.contains("answered \(HarborActorSystem.runningCallsPerUid) busy \(extra) other 0\n"))
            #expect(flood.exitCode() == 0)
            let served = harbord.probe("call", "com.example.d06", 10)
            #expect(served.allStdout() == "total 11\n")
        }
    }
}
