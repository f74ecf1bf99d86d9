// HarborDistributed tests — two systems in one process, calls across threads (D01, D04, D05, D13).
import Distributed
import Glibc
import HarborDistributed
import HarborDistributedProbe
import HarborPorts
import HarborTestSupport
import Testing

extension DistributedTests {
    @Suite struct InProcess {
        /// D01: an actor hosted by one system answers typed calls from
        /// another system in the same process: each call a message to its
        /// port, run on the actor, answered through a send-once right; many
        /// concurrent calls from many tasks all answer. Resolving in the
        /// hosting system gives the local actor itself.
        @Test func D01_anActorAnswersTypedCallsFromAnotherSystemAcrossThreads() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let id = try host.exportedID(of: counter)
            #expect(id == counter.id && id.isRemote && !counter.id.isRemote)

            let remote = try ProbeCounter.resolve(id: id, using: caller)
            #expect(__isRemoteActor(remote), "another system reaches the actor through its port")
            #expect(try await remote.add(2) == 2)
            #expect(try await remote.add(3) == 5)
            #expect(try await remote.processID() == getpid())

            let totals = try await withThrowingTaskGroup(of: Int.self) { group in
                // As many as one uid keeps running (D06): more may be refused `busy`.
                for _ in 0..<HarborActorSystem.runningCallsPerUid { group.addTask { try await remote.add(1) } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(totals.sorted() == Array(6...(5 + HarborActorSystem.runningCallsPerUid)),
                    "every concurrent call ran once and answered")

            let start = ContinuousClock.now
            for _ in 0..<1000 { _ = try await remote.add(0) }
            print("D01: 1000 sequential calls between two systems in one process: \((ContinuousClock.now - start) / 1000) a call")

            let local = try ProbeCounter.resolve(id: id, using: host)
            #expect(__isLocalActor(local) && local === counter, "the hosting system resolves the actor itself")
        }

        /// D13: code in a task that prefers a system's `taskExecutor` runs on
        /// the system's receiving thread, and each answer to its remote calls
        /// resumes it there (no hand-off to the concurrency pool); a task
        /// without the preference is resumed elsewhere.
        @Test func D13_aCallerThatPrefersTheSystemsThreadIsResumedThere() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let remote = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)

            let onSystem = try await Task(executorPreference: caller.taskExecutor) { () async throws -> [Bool] in
                var seen = [caller.isOnSystemThread]
                for n in 1...20 {
                    #expect(try await remote.add(1) == n)
                    seen.append(caller.isOnSystemThread)
                }
                return seen
            }.value
            #expect(onSystem.allSatisfy { $0 }, "the preferring caller left the system's thread: \(onSystem)")

            let elsewhere = try await Task { () async throws -> [Bool] in
                var seen: [Bool] = []
                for _ in 1...20 {
                    _ = try await remote.add(0)
                    seen.append(caller.isOnSystemThread)
                }
                return seen
            }.value
            #expect(!elsewhere.contains(true), "a caller without the preference ran on the system's thread")
        }

        /// D01: the remote function's error is rethrown as itself when it is
        /// Codable and its type is registered with the caller's system;
        /// otherwise it arrives as `remoteError` with the type's name and
        /// the description.
        @Test func D01_aThrownErrorIsRethrownTypedAtTheCaller() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let remote = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)

            do {
                _ = try await remote.refuse("untyped")
                Issue.record("no error")
            } catch let error as HarborActorSystemError {
                #expect(error.code == .remoteError && error.remoteType?.hasSuffix("ProbeError") == true,
                        "an unregistered type arrives described: \(error)")
                #expect(error.detail.contains("untyped"))
            }
            #expect(await actorCode { _ = try await remote.refuseTyped("typed") } == .remoteError,
                    "Swift 6.3 tells the system `any Error` even for throws(ProbeError)")
            caller.registerErrorType(ProbeError.self)
            await #expect(throws: ProbeError.refused(reason: "untyped")) { _ = try await remote.refuse("untyped") }
            await #expect(throws: ProbeError.refused(reason: "typed")) { _ = try await remote.refuseTyped("typed") }

            do {
                try await remote.refusePlainly()
                Issue.record("no error")
            } catch let error as HarborActorSystemError {
                #expect(error.code == .remoteError && error.remoteType?.hasSuffix("PlainProbeError") == true)
                #expect(error.detail == "a plain probe error")
            }
            #expect(try await remote.add(1) == 1, "the actor still answers")
        }

        /// D01: actor references are arguments: passing the caller's own
        /// local actor sends a send right to its port, and the other side
        /// calls it back.
        @Test func D01_anActorReferenceIsAnArgumentCarriedAsASendRight() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let remote = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)
            let mine = ProbeCounter(actorSystem: caller)
            #expect(try await remote.relay(mine, 7) == 7, "the host called the caller's actor back")
            #expect(try await mine.add(0) == 7)
            #expect(try await remote.relay(remote, 4) == 4, "a reference back to the host's own actor is the actor itself")
        }

        /// D04: a local actor is held by its system only while a send right
        /// to its port exists: once the last remote reference goes, the
        /// port's no-senders notification lets the system drop it, and it
        /// is released. An actor never exported is released with its last
        /// local reference, and its port is destroyed.
        @Test func D04_anActorIsReleasedWhenItsLastRemoteReferenceGoes() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }

            weak var unexported: ProbeCounter?
            do {
                let counter = ProbeCounter(actorSystem: host)
                unexported = counter
                #expect(try await counter.add(1) == 1)
            }
            #expect(unexported == nil, "an actor nobody reaches is released at once")

            weak var served: ProbeCounter?
            var remote: ProbeCounter?
            do {
                let counter = ProbeCounter(actorSystem: host)
                served = counter
                remote = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)
            }
            #expect(served != nil, "the host holds the actor while a remote reference exists")
            #expect(try await remote?.add(5) == 5)
            try await Task.sleep(for: .milliseconds(50))
            #expect(served != nil)
            remote = nil
            #expect(await eventually { served == nil }, "no-senders released the actor")
        }

        /// D04: a remote reference to an actor that was released, or whose
        /// system shut down, fails every call at once with `deadActor`.
        @Test func D04_callsToAReleasedActorFailAtOnce() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let remote = try ProbeCounter.resolve(id: try host.exportedID(of: counter), using: caller)
            #expect(try await remote.add(1) == 1)
            host.shutdown()
            let start = ContinuousClock.now
            #expect(await actorCode { _ = try await remote.add(1) } == .deadActor)
            #expect(await actorCode { _ = try await remote.add(1) } == .deadActor)
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(await actorCode { _ = try await ProbeCounter(actorSystem: host).add(0) } == nil,
                    "a local actor of a stopped system is still called directly")
        }
    }
}
