// HarborDistributed tests — a requirement on the caller's identity (D12).
import Distributed
import Glibc
import HarborDistributed
import HarborDistributedProbe
import HarborTestSupport
import Testing

extension DistributedTests {
    @Suite struct CallerRequirement {
        /// D12: a system's caller requirement, checked on the kernel's word
        /// about each call's sender: a caller that does not meet it is
        /// answered `callerRefused` and the function does not run (a first
        /// call, and the introducing calls by number after it); a caller
        /// that meets it is served; another process is refused by a
        /// requirement naming this process, and served without one.
        @Test func D12_aCallerThatFailsTheRequirementIsRefusedUnrun() async throws {
            let strict = try HarborActorSystem(callerRequirement: .hasUserID(getuid() &+ 1))
            let harbord = PrivateHarbord()
            let own = try HarborActorSystem(bootstrap: try harbord.client(), callerRequirement: .allOf([
                .isFromSameUser(), .hasProcessID(getpid()), .anyOf([.hasGroupID(getegid()), .isRoot()]),
            ]))
            let caller = try HarborActorSystem()
            defer { strict.shutdown(); own.shutdown(); caller.shutdown() }

            let guarded = ProbeCounter(actorSystem: strict)
            let refused = try ProbeCounter.resolve(id: try strict.exportedID(of: guarded), using: caller)
            for attempt in 1...3 {
                #expect(await actorCode { _ = try await refused.add(5) } == .callerRefused, "attempt \(attempt)")
            }
            #expect(try await guarded.add(0) == 0, "no refused call ran")

            let counter = ProbeCounter(actorSystem: own)
            let served = try ProbeCounter.resolve(id: try own.exportedID(of: counter), using: caller)
            #expect(try await served.add(1) == 1)
            #expect(try await served.add(1) == 2, "by number too")

            try own.serve(counter, as: "com.example.d12")
            let other = Child([builtExecutable("harbor-actor-probe"), "call", "com.example.d12", "8"],
                              environment: harbord.clientEnvironment)
            #expect(other.allStdout().hasPrefix("error caller refused"), "another process is not this one")
            #expect(try await counter.add(0) == 2, "its call did not run")

            let open = try HarborActorSystem(bootstrap: try harbord.client())
            defer { open.shutdown() }
            let anyone = ProbeCounter(actorSystem: open)
            try open.serve(anyone, as: "com.example.d12.open")
            let served2 = Child([builtExecutable("harbor-actor-probe"), "call", "com.example.d12.open", "8"],
                                environment: harbord.clientEnvironment)
            #expect(served2.allStdout() == "total 8\n", "without a requirement the same process is served")
        }
    }
}
