// Harbor — the name server's gauges, computed when asked (harbord: at each scrape).
import HarborPorts

extension BootstrapServer {
    /// Sets the server's gauges from its state now: names, clients,
    /// sessions, parked messages, queued requests, each tracked uid's use
    /// and limits (a uid no longer tracked loses its series), and adds the
    /// packets the transport refused since the last call
    /// (`harbor_transport_rejections_total`, process-wide). Counters and
    /// request timers need no call: they count as requests are served.
    /// Does nothing when no metrics backend was bootstrapped before the
    /// server was made. Docs/harbord.md, "Metrics", lists every series.
    ///
    /// **Cost:** a pass over the names and the uids it tracks; nothing while
    /// not called (an idle server is not woken for metrics).
    /// **Thread safety:** the loop's thread (post it with `Loop.perform`).
    public func reportMetrics() {
        metrics.refresh(from: self)
    }
}
