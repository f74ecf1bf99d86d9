// HarborDistributed tests — an actor on a checked-in name, called by other uids (D07).
import Distributed
import Glibc
import HarborDistributed
import HarborDistributedProbe
import HarborTestSupport
import Testing

extension DistributedTests {
    @Suite struct CheckIn {
        /// D07: root checks in a name the policy declares `shared NAME
        /// owner=0` for its actor; uid 65534 calls it and gets typed
        /// answers. Calls sent before the check-in waited in harbord and are
        /// answered after it, each charged to its real sender's uid (65534,
        /// as harbord vouches), never to harbord's. `unserve` gives the
        /// port back: the name waits in harbord again.
        @Test(.requiresRoot("to call as nobody"))
        func D07_anActorOnACheckedInSharedNameServesOtherUidsAndCallsThatWaited() async throws {
            let name = "com.example.d07"
            let harbord = PrivateHarbord(policy: "shared \(name) owner=0\n")
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let counter = ProbeCounter(actorSystem: system)

            // Before the check-in: two calls from nobody wait in harbord.
            let early = harbord.probeAsNobody("call", name, 5)
            let slow = harbord.probeAsNobody("flood", name, 1)
            try await Task.sleep(for: .milliseconds(500))
            #expect(early.stdoutSoFar.isEmpty && slow.stdoutSoFar.isEmpty, "nothing answers before the check-in")

            try system.checkIn(counter, as: name)
            #expect(early.allStdout() == "total 5\n", "a call that waited is answered: \(early.stderrSoFar)")
            #expect(await eventually { system.runningCallCount(for: 65534) == 1 },
                    "the relayed call that keeps running is charged to nobody")
            var harbordStatus = stat()
            #expect(stat("/proc/\(harbord.child.pid)", &harbordStatus) == 0)
            let harbordUid = harbordStatus.st_uid       // harbord drops root for a uid of its own
            #expect(system.runningCallCount(for: harbordUid) == 0, "never to harbord (uid \(harbordUid)), the relay")
            #expect(system.runningCallCount(for: 0) == 0, "nor to root")
            try await counter.open()
            #expect(slow.waitForStdout("total 6\n"), "\(slow.stdoutSoFar) \(slow.stderrSoFar)")
            #expect(slow.stdoutSoFar.hasPrefix("answered 1 busy 0 other 0\n"))
            #expect(system.runningCallCount(for: 65534) == 0, "the share is given back as it answers")

            // After the check-in: straight to the actor.
            let late = harbord.probeAsNobody("call", name, 10)
            #expect(late.allStdout() == "total 16\n", "\(late.stderrSoFar)")

            // unserve gives the port back; calls wait in harbord again, for the next check-in.
            try system.unserve(name)
            try await Task.sleep(for: .milliseconds(200))       // harbord sees the port die
            let waiting = harbord.probeAsNobody("call", name, 1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(waiting.stdoutSoFar.isEmpty, "the name waits in harbord again")
            try system.checkIn(counter, as: name)
            #expect(waiting.allStdout() == "total 17\n", "\(waiting.stderrSoFar)")
        }

        /// D06, D07: one uid holding its full share of running calls in a
        /// system does not keep uid 65534's call on a checked-in name from
        /// being served.
        @Test(.requiresRoot("to call as nobody"))
        func D06_D07_aUidAtItsFullShareLeavesAnotherUidServed() async throws {
            let name = "com.example.d07s"
            let harbord = PrivateHarbord(policy: "shared \(name) owner=0\n")
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let counter = ProbeCounter(actorSystem: system)
            try system.checkIn(counter, as: name)

            let flood = harbord.probe("flood", name, HarborActorSystem.runningCallsPerUid + 1)
            #expect(flood.waitForStdout("busy 1\n"), "root's share is full: \(flood.stdoutSoFar) \(flood.stderrSoFar)")
            let other = harbord.probeAsNobody("call", name, 3)
            #expect(other.allStdout() == "total 3\n", "nobody is still served: \(other.stderrSoFar)")
            try await counter.open()
            #expect(flood.waitForStdout("total 4\n"), "\(flood.stdoutSoFar)")
        }
    }
}
