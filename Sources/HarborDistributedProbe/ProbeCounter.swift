// HarborDistributedProbe — the distributed actor the tests and harbor-actor-probe share.
import Distributed
import HarborDistributed
import HarborSystem

/// A counter served by `harbor-actor-probe` and by the tests themselves:
/// typed values, a typed error, a call that never answers, actor
/// references as arguments.
public distributed actor ProbeCounter {
    public typealias ActorSystem = HarborActorSystem

    private var total = 0
    private var held: ProbeCounter?
    private var opened = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var cancellations = 0

    /// A counter at zero.
    public init(actorSystem: HarborActorSystem) {
        self.actorSystem = actorSystem
    }

    /// Adds `n`; the new total.
    public distributed func add(_ n: Int) -> Int {
        total += n
        return total
    }

    /// Throws ``ProbeError/refused(reason:)`` (an untyped `throws`).
    public distributed func refuse(_ reason: String) throws -> Int {
        throw ProbeError.refused(reason: reason)
    }

    /// Throws ``ProbeError/refused(reason:)`` as a typed `throws(ProbeError)`.
    public distributed func refuseTyped(_ reason: String) throws(ProbeError) -> Int {
        throw ProbeError.refused(reason: reason)
    }

    /// Throws an error that is not `Codable`.
    public distributed func refusePlainly() throws {
        throw PlainProbeError()
    }

    /// Never answers (until the process dies).
    public distributed func hang() async throws -> Int {
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// Answers once ``open()`` was called (at once after it): a slow call.
    public distributed func waitForOpen() async -> Int {
        if !opened {
            await withCheckedContinuation { waiting.append($0) }
        }
        return total
    }

    /// Answers every ``waitForOpen()``, and those to come.
    public distributed func open() {
        opened = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }

    /// Returns `value`: a generic function, its parameter substituted by
    /// the caller's type (D09).
    public distributed func echo<Value: Codable & Sendable>(_ value: Value) -> Value { value }

    /// The names of `a`'s and `b`'s types: a function of two generic
    /// parameters (D09).
    public distributed func pair<A: Codable & Sendable, B: Codable & Sendable>(_ a: A, _ b: B) -> String {
        "\(A.self) \(B.self)"
    }

    /// Runs until its task is cancelled (D11), looking at
    /// `Task.isCancelled` every 2 ms; counts the cancellation it saw, then
    /// throws `CancellationError` (`Task.checkCancellation()`).
    public distributed func runUntilCancelled() async throws -> Int {
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
        cancellations += 1
        try Task.checkCancellation()
        return cancellations
    }

    /// How many ``runUntilCancelled()`` calls saw their task cancelled.
    public distributed func cancellationsSeen() -> Int { cancellations }

    /// The serving process's id.
    public distributed func processID() -> Int32 { ProcessIdentity.current.pid }

    /// Keeps `other` (a reference, possibly to an actor of the caller's
    /// process) until called again with `nil`.
    public distributed func hold(_ other: ProbeCounter?) {
        held = other
    }

    /// Calls `add(n)` on `other` from here.
    public distributed func relay(_ other: ProbeCounter, _ n: Int) async throws -> Int {
        try await other.add(n)
    }
}
