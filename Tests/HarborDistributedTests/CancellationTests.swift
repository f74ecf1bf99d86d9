// HarborDistributed tests — a cancelled caller cancels the remote function (D11).
import Distributed
import Glibc
import HarborDistributed
import HarborDistributedProbe
import HarborPorts
import HarborTestSupport
import Synchronization
import Testing

/// What a call ended with, once it did: polled, so a call that never
/// answers fails a test in bounded time instead of hanging it.
final class CallOutcome: Sendable {
    private let code = Mutex<HarborActorSystemError.Code??>(nil)

    /// The call ended with `value` (nil: it answered without an error).
    func set(_ value: HarborActorSystemError.Code?) { code.withLock { $0 = .some(value) } }

    /// What it ended with; nil while it waits.
    var value: HarborActorSystemError.Code?? { code.withLock { $0 } }
}

extension DistributedTests {
    @Suite struct Cancellation {
        /// A cancel naming `number`, as a raw peer sends it.
        static func cancel(_ number: UInt64) -> Message {
            Message(id: 0x4841_4308, body: withUnsafeBytes(of: number.littleEndian) { Array($0) })
        }

        /// D11: when the caller's task is cancelled, the remote function's
        /// task is cancelled (it sees `Task.isCancelled` and throws
        /// `CancellationError`), and the caller gets one answer, `cancelled`,
        /// within 2 s: for a first call (a send-once reply), a call by
        /// number (D08), and a call made by a task cancelled before it.
        /// Cancels naming no running call, or malformed, are ignored.
        @Test func D11_aCancelledCallersTaskCancelsTheRemoteFunction() async throws {
            let host = try HarborActorSystem()
            let caller = try HarborActorSystem()
            defer { host.shutdown(); caller.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            let id = try host.exportedID(of: counter)
            let port = try #require(id.right)
            let remote = try ProbeCounter.resolve(id: id, using: caller)

            for round in 1...2 {        // 1: the port's first call, with a send-once reply; 2: by number
                let outcome = CallOutcome()
                let call = Task { outcome.set(await actorCode { _ = try await remote.runUntilCancelled() }) }
                #expect(await eventually { host.runningCallCount(for: getuid()) == 1 }, "round \(round): the call runs")
                // Cancels naming no running call, and malformed ones: ignored.
                try port.send(Self.cancel(UInt64.max), timeout: .seconds(1))
                try port.send(Self.cancel(0), timeout: .seconds(1))
                try port.send(Message(id: 0x4841_4308, body: [1, 2, 3]), timeout: .seconds(1))
                try await Task.sleep(for: .milliseconds(50))
                #expect(try await counter.cancellationsSeen() == round - 1, "round \(round): not cancelled yet")
                let cancelledAt = ContinuousClock.now
                call.cancel()
                let answered = await eventually(.seconds(2)) { outcome.value != nil }
                let took = ContinuousClock.now - cancelledAt
                #expect(answered, "round \(round): answered \(took) after the cancel")
                if !answered { caller.shutdown() }      // ends the call: the test fails, in bounded time
                await call.value
                #expect(outcome.value == .some(.cancelled), "round \(round)")
                #expect(try await counter.cancellationsSeen() == round, "round \(round): the function saw it")
                print("D11: round \(round): cancelled, answered after \(took)")
            }

            let outcome = CallOutcome()
            let early = Task {
                while !Task.isCancelled { await Task.yield() }
                outcome.set(await actorCode { _ = try await remote.runUntilCancelled() })
            }
            early.cancel()
            let answered = await eventually(.seconds(2)) { outcome.value != nil }
            if !answered { caller.shutdown() }
            await early.value
            #expect(outcome.value == .some(.cancelled), "a call made by a cancelled task is cancelled there")
            #expect(try await counter.cancellationsSeen() == 3)
            #expect(try await remote.add(2) == 2, "the actor serves on")
            #expect(await eventually { host.runningCallCount(for: getuid()) == 0 })
        }

        /// D11: across processes, the probe's cancelled task cancels the
        /// function it called here; cancels this process forges for every
        /// number the probe may have used are ignored (a cancel counts only
        /// from the caller's own process).
        @Test func D11_aCancelCountsOnlyFromTheCallersProcess() async throws {
            let harbord = PrivateHarbord()
            let host = try HarborActorSystem(bootstrap: try harbord.client())
            defer { host.shutdown() }
            let counter = ProbeCounter(actorSystem: host)
            try host.serve(counter, as: "com.example.d11")
            let port = try #require(try host.exportedID(of: counter).right)

            let probe = Child([builtExecutable("harbor-actor-probe"), "spin", "com.example.d11", "1500"],
                              environment: harbord.clientEnvironment)
            #expect(probe.waitForStdout("calling"))
            #expect(await eventually { host.runningCallCount(for: getuid()) == 1 }, "the probe's call runs")
            for number in UInt64(0)..<512 { try port.send(Self.cancel(number), timeout: .seconds(1)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await counter.cancellationsSeen() == 0, "another process's cancels were ignored")
            #expect(host.runningCallCount(for: getuid()) == 1)
            #expect(probe.allStdout().hasPrefix("calling\nerror cancelled"), "the probe cancels its own call")
            #expect(try await counter.cancellationsSeen() == 1)
        }
    }
}
