// Harbor — what a BootstrapClient reports through swift-metrics: its look-ups and their latency.
import CoreMetrics
import HarborSystem

/// A process's look-ups through ``BootstrapClient/lookUp(_:)``, reported
/// through swift-metrics (Docs/harbord.md, "Metrics"):
/// `harbor_client_lookups_total{result}` and
/// `harbor_client_lookup_duration_seconds` (a timer: the request to the
/// name server and its reply, whatever the result).
///
/// The metrics are made at the process's first look-up, so a backend must
/// be bootstrapped before it (as swift-metrics asks of every library). With
/// none (the default, the no-op handler) a look-up reads no clock and
/// touches no counter: one branch on a flag set once.
///
/// **Thread safety:** any thread.
enum ClientMetrics {
    /// The metrics, or nil with no backend; made once, at the first look-up.
    private static let reporting: Reporting? = MetricsSystem.factory is NOOPMetricsHandler ? nil : Reporting()

    /// Runs `body` (a look-up's request), counting it by result and timing it.
    @inline(__always)
    static func lookUp<Reply: ~Copyable>(_ body: () throws(BootstrapError) -> Reply) throws(BootstrapError) -> Reply {
        guard let reporting else { return try body() }
        let started = ContinuousClock.now
        do {
            let reply = try body()
            reporting.record(since: started, code: nil)
            return reply
        } catch {
            reporting.record(since: started, code: error.code)
            throw error
        }
    }

    /// The counters and the timer, once a backend is there.
    private final class Reporting: Sendable {
        let found = Counter(label: "harbor_client_lookups_total", dimensions: [("result", "found")])
        let duration = Timer(label: "harbor_client_lookup_duration_seconds")
        /// One counter per error code seen (a fixed set of label values).
        let failures = HarborLock<[Int32: Counter]>([:])

        func record(since started: ContinuousClock.Instant, code: BootstrapError.Code?) {
            let (seconds, attoseconds) = (ContinuousClock.now - started).components
            duration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            guard let code else {
                found.increment()
                return
            }
            failures.withLock { counters in
                let counter = counters[code.rawValue]
                    ?? Counter(label: "harbor_client_lookups_total", dimensions: [("result", code.metricLabel)])
                counters[code.rawValue] = counter
                return counter
            }.increment()
        }
    }
}
