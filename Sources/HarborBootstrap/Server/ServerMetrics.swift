// Harbor — what the name server reports through swift-metrics: requests, their time, refusals, per-uid use.
import CoreMetrics
import Glibc  // types only: uid_t
import HarborPorts
import HarborTransport

/// The name server's metrics (Docs/harbord.md, "Metrics"), reported
/// through swift-metrics to whatever backend the process bootstrapped
/// (`harbord --metrics-socket`: Prometheus).
///
/// Made with the server, so a backend must be bootstrapped before the
/// server is made. With none (swift-metrics' default, the no-op handler)
/// ``enabled`` is false: the server then reads no clock and never calls
/// ``handled(_:since:)``, and every other call returns at once, touching
/// no counter, so a server without metrics costs one branch per request.
///
/// Counters and the request timer are updated as requests are served;
/// the gauges (names, clients, parked messages, queue depths, per-uid use)
/// are computed only when ``refresh(from:)`` runs (harbord: at each
/// scrape), so an idle server does nothing for them.
///
/// **Thread safety:** the loop's thread only, like the server.
final class ServerMetrics {
    /// Whether a metrics backend was bootstrapped when the server was made.
    let enabled: Bool

    /// The request kinds, by their index (``kind(of:)``): the ids
    /// `BootstrapRequest.lookUp` (0x48420001) to `tap` (0x4842000E) in order.
    static let requestLabels = ["unknown", "look_up", "check_in", "register", "unregister", "list", "gone",
                                "register_replies", "ports", "introspect", "sessions", "print", "list_all",
                                "monitor", "tap"]

    private var requests: [Counter] = []
    private var durations: [Timer] = []
    private var refusals: [Int: Counter] = [:]
    private var drops: [String: Counter] = [:]
    private var connectionRefusals: [Int32: Counter] = [:]
    private var connections: Counter?
    private var totals: [String: Gauge] = [:]
    private var limits: [String: Gauge] = [:]
    /// Per-uid use: each tracked uid's gauges, by resource; dropped when the uid goes.
    private var perUser: [uid_t: [String: Gauge]] = [:]
    private var transportSeen = [Int](repeating: 0, count: WireRejectionReason.allCases.count)
    private var transportCounters: [Int: Counter] = [:]

    /// The per-uid resources, in the order ``refresh(from:)`` reports them.
    static let userResources = ["names", "sessions", "clients", "pending_messages", "descriptors", "queued_requests"]

    init() {
        enabled = !(MetricsSystem.factory is NOOPMetricsHandler)
        guard enabled else { return }
        requests = Self.requestLabels.map { Counter(label: "harbor_bootstrap_requests_total", dimensions: [("request", $0)]) }
        durations = Self.requestLabels.map {
            Timer(label: "harbor_bootstrap_request_duration_seconds", dimensions: [("request", $0)])
        }
        connections = Counter(label: "harbor_bootstrap_connections_total")
    }

    /// The index of request `id` in ``requestLabels`` (0: not a request),
    /// whether it names a registered reply right or carries its own.
    static func kind(of id: Int32) -> Int {
        let index = Int(id & ~BootstrapRequest.registeredReplyBit) - Int(BootstrapRequest.lookUp) + 1
        return (1..<requestLabels.count).contains(index) ? index : 0
    }

    /// A request `id` was handled (answered, refused or dropped), its
    /// handling started at `started`. Called only when ``enabled``: the
    /// server reads no clock otherwise (nor moves an optional instant
    /// around, whose layout the standard library keeps opaque).
    func handled(_ id: Int32, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let kind = Self.kind(of: id)
        requests[kind].increment()
        let (seconds, attoseconds) = elapsed.components
        durations[kind].recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Request `id` was refused with `code` (its reply says why).
    func refused(_ id: Int32, _ code: BootstrapError.Code) {
        guard enabled else { return }
        let kind = Self.kind(of: id)
        let key = kind << 32 | Int(UInt32(bitPattern: code.rawValue))
        if let counter = refusals[key] { counter.increment(); return }
        let counter = Counter(label: "harbor_bootstrap_refusals_total",
                              dimensions: [("request", Self.requestLabels[kind]), ("reason", code.metricLabel)])
        refusals[key] = counter
        counter.increment()
    }

    /// A request was dropped unanswered, for `reason` (`no_reply_right`,
    /// `reply_right_elsewhere`).
    func dropped(_ reason: String) {
        guard enabled else { return }
        let counter = drops[reason] ?? Counter(label: "harbor_bootstrap_dropped_requests_total", dimensions: [("reason", reason)])
        drops[reason] = counter
        counter.increment()
    }

    /// A connection got its bootstrap right.
    func connected() { connections?.increment() }

    /// A connection was refused with `code` (its uid at a limit).
    func connectionRefused(_ code: BootstrapError.Code) {
        guard enabled else { return }
        let counter = connectionRefusals[code.rawValue]
            ?? Counter(label: "harbor_bootstrap_refused_connections_total", dimensions: [("reason", code.metricLabel)])
        connectionRefusals[code.rawValue] = counter
        counter.increment()
    }

    /// Sets every gauge from `server`'s state now, drops the gauges of uids
    /// it no longer tracks, and adds the packets the transport refused
    /// since the last refresh (`WireRejections`, process-wide).
    func refresh(from server: BootstrapServer) {
        guard enabled else { return }
        let summary = server.summary
        var parked = 0
        for entry in server.entries.values {
            guard let waiting = entry.waiting else { continue }
            parked += waiting.pending.count + (waiting.port?.status.queuedMessages ?? 0)
        }
        total("harbor_bootstrap_names", summary.names)
        total("harbor_bootstrap_clients", summary.clients)
        total("harbor_bootstrap_sessions", server.sessions.count)
        total("harbor_bootstrap_parked_messages", parked)
        total("harbor_bootstrap_queued_requests", server.users.values.reduce(0) { $0 + $1.port.status.queuedMessages })
        total("harbor_bootstrap_uids", Set(server.users.keys).union(server.charges.keys).count)
        limit("names", server.quotas.namesPerUser)
        limit("sessions", server.quotas.sessionsPerUser)
        limit("clients", server.quotas.clientsPerUser)
        limit("pending_messages", server.quotas.pendingPerUser)

        let tracked = Set(server.users.keys).union(server.charges.keys)
        for (uid, gauges) in perUser where !tracked.contains(uid) {
            for gauge in gauges.values { gauge.destroy() }
            perUser[uid] = nil
        }
        for uid in tracked {
            let charge = server.charges[uid] ?? UserCharges()
            let port = server.users[uid]
            let values = [charge.names, charge.sessions, port?.clients ?? 0, charge.pending,
                          server.descriptorsHeld(by: uid), port?.port.status.queuedMessages ?? 0]
            var gauges = perUser[uid] ?? [:]
            for (resource, value) in zip(Self.userResources, values) {
                let gauge = gauges[resource] ?? Gauge(label: "harbor_bootstrap_uid_usage",
                                                      dimensions: [("uid", String(uid)), ("resource", resource)])
                gauges[resource] = gauge
                gauge.record(value)
            }
            perUser[uid] = gauges
        }

        for reason in WireRejectionReason.allCases {
            let count = WireRejections.count(reason)
            let added = count - transportSeen[reason.rawValue]
            guard added > 0 else { continue }
            transportSeen[reason.rawValue] = count
            let counter = transportCounters[reason.rawValue]
                ?? Counter(label: "harbor_transport_rejections_total",
                           dimensions: [("reason", String(reason.description.map { $0 == " " ? "_" : $0 }))])
            transportCounters[reason.rawValue] = counter
            counter.increment(by: added)
        }
    }

    private func total(_ label: String, _ value: Int) {
        let gauge = totals[label] ?? Gauge(label: label)
        totals[label] = gauge
        gauge.record(value)
    }

    private func limit(_ resource: String, _ value: Int) {
        let gauge = limits[resource] ?? Gauge(label: "harbor_bootstrap_uid_limit", dimensions: [("resource", resource)])
        limits[resource] = gauge
        gauge.record(value)
    }
}
