// Harbor — security tests: one attack against one victim, with an honest
// client working alongside, the victim's usage measured before, during and
// after, and its refusal counts read before and after.
import Glibc
import HarborTestSupport
import Synchronization
import Testing

/// Everything one siege observed.
struct Siege {
    /// The first adversary's run (the only one, unless several uids attacked).
    var adversary: AdversaryRun { adversaries[0] }
    /// Every adversary's run, one per uid, in the order of `uids`.
    let adversaries: [AdversaryRun]
    /// Honest requests that went wrong while the adversary ran (and just after).
    let honestFailures: [String]
    let honestSuccesses: Int
    let baseline: Usage
    /// The highest descriptor count and resident size seen during the attack.
    let peak: Usage?
    /// Usage once it came back to baseline, or the last seen at the deadline.
    let after: Usage?
    let refusalsBefore: [String: Int]?
    let refusalsAfter: [String: Int]?
    let aliveAfter: Bool
    /// An honest request after the adversary left, and what it said (nil: fine).
    let honestAfter: String?
    /// The share of a CPU the victim used in the second after that, idle.
    let idleCPU: Double?

    /// How many more refusals the victim counted for `reason` (with dashes
    /// for spaces; "refused" is the total); nil if it cannot tell.
    func refused(_ reason: String = "refused") -> Int? {
        guard let after = refusalsAfter?[reason] else { return nil }
        return after - (refusalsBefore?[reason] ?? 0)
    }

    var summary: String {
        "adversar\(adversaries.count == 1 ? "y" : "ies"): \(adversaries.map(\.description).joined(separator: " | ")); "
            + "honest: \(honestSuccesses) ok, \(honestFailures.count) failed "
            + "\(honestFailures.prefix(3)); baseline \(baseline), peak \(peak.map { "\($0)" } ?? "-"), "
            + "after \(after.map { "\($0)" } ?? "-"), idle CPU \(idleCPU.map { "\(Int($0 * 1000)) ‰" } ?? "-"); "
            + "refusals \(refusalsBefore ?? [:]) → \(refusalsAfter ?? [:])"
    }
}

/// A flag one thread sets and another polls.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// How much a victim may keep above its baseline once the adversary is gone.
struct Slack {
    var descriptors = 2
    /// Resident bytes it may keep. Under a sanitizer (Scripts/sanitizers.sh
    /// sets its options for the victims too) the sanitizer's allocator
    /// decides resident memory (AddressSanitizer keeps freed memory in
    /// quarantine, ThreadSanitizer grows shadow), so the bound is checked in
    /// the plain run and there only a growth past 512 MiB fails
    /// (``allowedResidentBytes``; LeakSanitizer still reports leaks).
    var residentBytes = 8 << 20
    /// How long it may take to get back there.
    var within: Duration = .seconds(10)

    /// Whether this run's processes are built with a sanitizer.
    static let underSanitizer = getenv("ASAN_OPTIONS") != nil || getenv("TSAN_OPTIONS") != nil

    /// ``residentBytes``, or 512 MiB under a sanitizer.
    var allowedResidentBytes: Int { Self.underSanitizer ? max(residentBytes, 512 << 20) : residentBytes }
}

/// The share of a CPU a victim may take once the attack is over: 5 %, or
/// 25 % under a sanitizer (its runtime's own thread works after a flood; a
/// fresh-clone ThreadSanitizer pass saw a service pass 5 %). A victim left
/// spinning takes the whole CPU.
let idleBound = Slack.underSanitizer ? 0.25 : 0.05

/// Warms `victim` up (honest requests and a harmless adversary), measures
/// it, then runs `attack` with the honest client going every 100 ms: one
/// adversary per uid of `uids`, all at once.
func besiege(_ victim: Victim, _ attack: String, _ arguments: [String] = [], uids: [uid_t] = [adversaryUID],
             slack: Slack = Slack(), timeout: Duration = .seconds(120)) throws -> Siege {
    for _ in 0..<3 { _ = victim.honestRequest() }
    _ = try runAdversary("noop", against: victim, timeout: .seconds(30))
    for _ in 0..<3 { _ = victim.honestRequest() }
    usleep(300_000)
    guard let baseline = Usage(of: victim.pid) else { throw SecurityTestError("the victim is gone before the attack") }
    let refusalsBefore = victim.refusals()

    let sampler = UsageSampler(victim.pid)
    let stop = StopFlag()
    let honest = TestThread { () -> (Int, [String]) in
        var successes = 0
        var failures: [String] = []
        while !stop.isSet {
            if let failure = victim.honestRequest() { failures.append(failure) } else { successes += 1 }
            usleep(100_000)
        }
        return (successes, failures)
    }
    let runs = uids.map { uid in
        TestThread { () -> Result<AdversaryRun, any Error> in
            Result { try runAdversary(attack, against: victim, arguments, as: uid, timeout: timeout) }
        }
    }
    let adversaries = try runs.map { try $0.join().get() }
    usleep(300_000)  // one or two more honest requests after it left
    stop.set()
    let (successes, failures) = honest.join()
    let peak = sampler.stop()

    let deadline = ContinuousClock.now + slack.within
    var after = Usage(of: victim.pid)
    while let current = after, ContinuousClock.now < deadline,
          current.descriptors > baseline.descriptors + slack.descriptors
            || current.residentBytes > baseline.residentBytes + slack.allowedResidentBytes {
        usleep(100_000)
        after = Usage(of: victim.pid)
    }
    let honestAfter = victim.honestRequest()
    // Idle within 15 s: a victim may still be draining what the adversary
    // left in its sockets' buffers (a connection counts as one descriptor
    // of the slack, so the wait above can end before the drain does; under
    // ThreadSanitizer on a loaded machine a drain of 300,000 small messages
    // outlasted it). A victim left spinning never gets there.
    var idle = cpuShare(of: victim.pid)
    let idleDeadline = ContinuousClock.now + .seconds(15)
    while let share = idle, share >= idleBound, ContinuousClock.now < idleDeadline {
        idle = cpuShare(of: victim.pid)
    }
    let siege = Siege(adversaries: adversaries, honestFailures: failures, honestSuccesses: successes, baseline: baseline,
                 peak: peak, after: after, refusalsBefore: refusalsBefore, refusalsAfter: victim.refusals(),
                 aliveAfter: victim.isAlive, honestAfter: honestAfter, idleCPU: idle)
    print("siege \(victim.kind) \(attack): \(siege.summary)")
    return siege
}

/// The checks every attack must pass: the adversary ran to its end, the
/// victim is alive and kept answering the honest client throughout, it
/// sits idle afterwards (``idleBound``, within 15 s), its descriptors and memory
/// came back to baseline, and it counted at least
/// `refusals` refusals (of `reason`) if it reports its counts at all.
func expectContained(_ siege: Siege, slack: Slack = Slack(), refusals: Int = 0, reason: String = "refused",
                     adversaryFinishes: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
    let summary = siege.summary
    if adversaryFinishes {
        let finished = siege.adversaries.allSatisfy { $0.finished }
        #expect(finished, "an adversary did not run to its end: \(summary)", sourceLocation: sourceLocation)
    }
    #expect(siege.aliveAfter, "the victim died: \(summary)", sourceLocation: sourceLocation)
    #expect(siege.honestFailures.count == 0, "the honest client failed: \(summary)", sourceLocation: sourceLocation)
    #expect(siege.honestSuccesses > 0, "the honest client never got through: \(summary)", sourceLocation: sourceLocation)
    #expect(siege.honestAfter == nil, "the victim stopped serving: \(siege.honestAfter ?? "") \(summary)",
            sourceLocation: sourceLocation)
    // An attack may leave no trace in what the victim holds and still leave
    // it spinning (a readiness signal that never clears).
    // (``idleBound``, within 15 s of the attack's end.)
    #expect(siege.idleCPU.map { $0 < idleBound } ?? false, "the victim is busy while idle: \(summary)",
            sourceLocation: sourceLocation)
    if let after = siege.after {
        #expect(after.descriptors <= siege.baseline.descriptors + slack.descriptors,
                "descriptors did not come back: \(summary)", sourceLocation: sourceLocation)
        #expect(after.residentBytes <= siege.baseline.residentBytes + slack.allowedResidentBytes,
                "memory did not come back: \(summary)", sourceLocation: sourceLocation)
    } else {
        Issue.record("the victim could not be measured after the attack: \(summary)", sourceLocation: sourceLocation)
    }
    // A victim that cannot tell its counts is held to this by
    // P12_harbordCountsItsRefusals instead.
    if refusals > 0, siege.refusalsAfter != nil {
        let counted = siege.refused(reason)
        #expect(counted.map { $0 >= refusals } == true,
                "refusals (\(reason)) counted: \(counted.map(String.init) ?? "unknown"), wanted ≥ \(refusals): \(summary)",
                sourceLocation: sourceLocation)
    }
}
