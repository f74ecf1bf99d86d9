// Harbor — the `# HELP` line of every series harbord serves (Docs/harbord.md, "Metrics").
//
// swift-prometheus writes `# HELP` only for metrics made with help text,
// and the swift-metrics factory makes them without (a second registration
// with other text is a fatal error there), so harbord's endpoint adds the
// lines to the text it serves, from this one table.

/// The help text of each series the name server and the transport report.
package enum MetricHelp {
    /// Series name to its help text: one line, no backslash.
    package static let texts: [String: String] = [
        "harbor_bootstrap_requests_total":
            "Requests taken from the uids' bootstrap ports and handled (answered, refused or dropped), by kind.",
        "harbor_bootstrap_request_duration_seconds":
            "Time from taking a request off its port to its reply sent, by kind.",
        "harbor_bootstrap_refusals_total": "Requests answered with an error, by kind and reason.",
        "harbor_bootstrap_dropped_requests_total": "Requests dropped unanswered, by reason.",
        "harbor_bootstrap_connections_total": "Connections welcomed with a bootstrap right.",
        "harbor_bootstrap_refused_connections_total": "Connections refused, by reason.",
        "harbor_transport_rejections_total":
            "Packets from other processes the transport's decoding and admission refused, by reason.",
        "harbor_bootstrap_names": "Names in the table (declared, checked in, registered).",
        "harbor_bootstrap_clients": "Connections to the bootstrap ports.",
        "harbor_bootstrap_sessions": "Sessions: processes holding names.",
        "harbor_bootstrap_parked_messages": "Messages waiting in declared names' ports for their service to check in.",
        "harbor_bootstrap_queued_requests": "Requests queued in the bootstrap ports, not yet taken.",
        "harbor_bootstrap_uids": "Uids the name server tracks (with a connection or a charge).",
        "harbor_bootstrap_uid_usage": "Each tracked uid's use of a resource.",
        "harbor_bootstrap_uid_limit": "The per-uid limit in force for a resource.",
        "harbor_client_lookups_total": "BootstrapClient look-ups, by result.",
        "harbor_client_lookup_duration_seconds": "Each look-up's request and reply, client side.",
    ]

    /// `exposition` (the Prometheus text format) with a `# HELP NAME TEXT`
    /// line before each `# TYPE NAME …` line of a series in ``texts`` that
    /// has none.
    package static func annotated(_ exposition: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(exposition.count + 2048)
        var previous: ArraySlice<UInt8> = []
        for line in exposition.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.starts(with: Array("# TYPE ".utf8)) {
                let name = String(decoding: line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if let text = texts[name], !previous.starts(with: Array("# HELP \(name) ".utf8)) {
                    out += Array("# HELP \(name) \(text)\n".utf8)
                }
            }
            out += line
            out.append(UInt8(ascii: "\n"))
            previous = line
        }
        // split kept what followed the last newline (nothing): no extra one.
        if !out.isEmpty, exposition.last == UInt8(ascii: "\n") || exposition.isEmpty { out.removeLast() }
        return out
    }
}
