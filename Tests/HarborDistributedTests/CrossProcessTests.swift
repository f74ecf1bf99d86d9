// HarborDistributed tests — an actor in another process, by harbord name (D02, D03, D04).
import Distributed
import Glibc
import HarborDistributed
import HarborDistributedProbe
import HarborTestSupport
import Testing

extension DistributedTests {
    @Suite struct CrossProcess {
        /// D02: an actor served under a harbord name by another process is
        /// resolved by that name and answers typed calls; its typed error
        /// is rethrown as itself; a name nobody serves is `actorNotFound`.
        @Test func D02_anActorServedByNameInAnotherProcessAnswersTypedCalls() async throws {
            let harbord = PrivateHarbord()
            let probe = harbord.serve("com.example.d02")
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let counter = try system.resolve(name: "com.example.d02", as: ProbeCounter.self)
            #expect(__isRemoteActor(counter))
            #expect(try await counter.processID() == probe.pid)
            #expect(try await counter.add(40) == 40)
            #expect(try await counter.add(2) == 42)
            let start = ContinuousClock.now
            for _ in 0..<1000 { _ = try await counter.add(0) }
            print("D02: 1000 sequential calls to another process: \((ContinuousClock.now - start) / 1000) a call")
            system.registerErrorType(ProbeError.self)
            await #expect(throws: ProbeError.refused(reason: "no")) { _ = try await counter.refuseTyped("no") }
            await #expect(throws: ProbeError.refused(reason: "never")) { _ = try await counter.refuse("never") }
            #expect(await actorCode { _ = try system.resolve(name: "com.example.none", as: ProbeCounter.self) } == .actorNotFound)

            let other = Child([builtExecutable("harbor-actor-probe"), "call", "com.example.d02", "8"],
                              environment: baseEnvironment() + ["HARBOR_BOOTSTRAP=\(harbord.socketPath)"])
            #expect(other.allStdout() == "total 50\n", "a third process resolves the same actor")
        }

        /// D03: when the actor's process dies (SIGKILL) with a call pending,
        /// the call's send-once reply right dies with it and the call throws
        /// `deadActor` at once, not by a timeout; the next call fails at once.
        @Test func D03_theServersDeathFailsAPendingCallAndTheNextAtOnce() async throws {
            let harbord = PrivateHarbord()
            let probe = harbord.serve("com.example.d03")
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let counter = try system.resolve(name: "com.example.d03", as: ProbeCounter.self)
            #expect(try await counter.add(1) == 1)

            let pending = Task { await actorCode { _ = try await counter.hang() } }
            try await Task.sleep(for: .milliseconds(200))       // the call reaches the actor
            let killed = ContinuousClock.now
            kill(probe.pid, SIGKILL)
            let code = await pending.value
            let took = ContinuousClock.now - killed
            #expect(code == .deadActor)
            #expect(took < .seconds(2), "the pending call failed \(took) after SIGKILL")
            print("D03: pending call failed \(took) after SIGKILL")

            let next = ContinuousClock.now
            #expect(await actorCode { _ = try await counter.add(1) } == .deadActor)
            #expect(ContinuousClock.now - next < .milliseconds(500), "the next call failed at once")
            _ = probe.waitForExit()
        }

        /// D02, D04: an actor served by name is held while the name stands,
        /// in the hosting system resolves to itself, and is released once
        /// the name is taken back and no other reference remains.
        @Test func D02_D04_aServedActorIsHeldUntilItsNameIsTakenBack() async throws {
            let harbord = PrivateHarbord()
            let host = try HarborActorSystem(bootstrap: try harbord.client())
            let caller = try HarborActorSystem(bootstrap: try harbord.client())
            defer { host.shutdown(); caller.shutdown() }
            weak var served: ProbeCounter?
            do {
                let counter = ProbeCounter(actorSystem: host)
                served = counter
                try host.serve(counter, as: "com.example.d04s")
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(served != nil, "held while served")
            do {
                let itself = try host.resolve(name: "com.example.d04s", as: ProbeCounter.self)
                #expect(itself === served, "the hosting system resolves its own name to the actor")
                let remote = try caller.resolve(name: "com.example.d04s", as: ProbeCounter.self)
                #expect(__isRemoteActor(remote))
                #expect(try await remote.add(6) == 6)
            }
            try host.unserve("com.example.d04s")
            #expect(await eventually { served == nil }, "released when the name went and no reference remained")
            #expect(await actorCode { _ = try caller.resolve(name: "com.example.d04s", as: ProbeCounter.self) } == .actorNotFound)
        }

        /// D04: a local actor passed to another process stays alive while
        /// that process holds the reference, and is released when it lets
        /// go (no-senders across processes); meanwhile the other process
        /// calls it back.
        @Test func D04_anActorPassedToAnotherProcessIsReleasedWhenThatProcessLetsGo() async throws {
            let harbord = PrivateHarbord()
            let probe = harbord.serve("com.example.d04")
            let system = try HarborActorSystem(bootstrap: try harbord.client())
            defer { system.shutdown() }
            let counter = try system.resolve(name: "com.example.d04", as: ProbeCounter.self)

            weak var lent: ProbeCounter?
            do {
                let mine = ProbeCounter(actorSystem: system)
                lent = mine
                #expect(try await counter.relay(mine, 3) == 3, "the other process called it back")
                try await counter.hold(mine)
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(lent != nil, "held while the other process holds a reference")
            try await counter.hold(nil)
            #expect(await eventually { lent == nil }, "released when the other process let go")
            _ = probe
        }
    }
}
