// Harbor — service notifications to systemd: readiness, status, stopping, watchdog pings.
import CSystemd
import HarborPorts
import HarborRunLoop
import HarborSystem

/// Tells the service manager about this process over `$NOTIFY_SOCKET`
/// (`sd_notify`): `READY=1`, `STATUS=…`, `STOPPING=1`, `WATCHDOG=1`.
///
/// Without `NOTIFY_SOCKET` (not started by systemd, or `Type=` is not
/// `notify`) every call is a silent no-op that returns false, as
/// libsystemd's is; a daemon can call them unconditionally.
///
/// The watchdog is kept alive by a `LoopTimer` on the daemon's main run
/// loop (``startWatchdog(on:mode:)``), not by a helper thread: if the loop
/// wedges (a callout never returns), the timer does not fire, the pings
/// stop, and systemd sees the hang and acts on `WatchdogSec=`.
///
/// **Cost:** one `socket`+`sendmsg` per call (libsystemd opens a datagram
/// socket each time).
/// **Thread safety:** any thread.
/// **Darwin equivalent:** launchd has no readiness protocol; the closest is
/// `launch_activate_socket` plus `xpc_transaction` for keep-alive.
public struct ServiceNotifier: Sendable {
    /// A notifier for this process.
    public init() {}

    /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
    public var isSupervised: Bool { ProcessControl.environmentValue("NOTIFY_SOCKET") != nil }

    /// Sends newline-separated `KEY=value` assignments as one datagram.
    /// - Returns: true if sent, false when there is no `NOTIFY_SOCKET`.
    /// - Throws: ``SystemdError`` if sending failed (`sd_notify` < 0).
    @discardableResult
    public func notify(_ assignments: String) throws(SystemdError) -> Bool {
        try checkSystemd(sd_notify(0, assignments), "sd_notify", "could not send \(assignments.debugDescription)") > 0
    }

    /// `READY=1`, with an optional `STATUS=` in the same datagram: start-up
    /// is complete (what `Type=notify` waits for).
    @discardableResult
    public func ready(status: String? = nil) throws(SystemdError) -> Bool {
        try notify("READY=1" + (try Self.statusLine(status)))
    }

    /// `STATUS=text`: a one-line status shown by `systemctl status`.
    /// - Throws: ``SystemdError/Code/invalidArgument`` if `text` has a newline.
    @discardableResult
    public func status(_ text: String) throws(SystemdError) -> Bool {
        try notify("STATUS=" + (try Self.checked(text)))
    }

    /// `STOPPING=1`: the service has begun shutting down.
    @discardableResult
    public func stopping(status: String? = nil) throws(SystemdError) -> Bool {
        try notify("STOPPING=1" + (try Self.statusLine(status)))
    }

    /// `WATCHDOG=1`: one keep-alive ping.
    @discardableResult
    public func pingWatchdog() throws(SystemdError) -> Bool { try notify("WATCHDOG=1") }

    /// The watchdog period systemd expects pings within (`WATCHDOG_USEC`),
    /// or nil when no watchdog is asked of this process (unset, or
    /// `WATCHDOG_PID` names another process) — `sd_watchdog_enabled`.
    public func watchdogInterval() throws(SystemdError) -> Duration? {
        var usec: UInt64 = 0
        guard try checkSystemd(sd_watchdog_enabled(0, &usec), "sd_watchdog_enabled") > 0, usec > 0 else { return nil }
        return .microseconds(Int64(clamping: usec))
    }

    /// Pings now, then every half ``watchdogInterval()`` from a repeating
    /// timer on `loop` in `mode` (`.common` by default, so it fires whatever
    /// common mode the loop runs in).
    ///
    /// The pings come only while the loop runs: a wedged loop stops them
    /// (that is the point). A failed ping is ignored (the next one retries).
    /// - Returns: the timer (invalidate it to stop pinging), or nil when no
    ///   watchdog is asked of this process.
    @discardableResult
    public func startWatchdog(on loop: Loop, mode: LoopMode = .common) throws(SystemdError) -> LoopTimer? {
        guard let interval = try watchdogInterval() else { return nil }
        let period = interval / 2
        try pingWatchdog()
        let timer = LoopTimer(after: period, repeating: period, tolerance: period / 10, label: "sd-watchdog") { _ in
            _ = try? ServiceNotifier().pingWatchdog()
        }
        loop.add(timer, forMode: mode)
        return timer
    }

    private static func statusLine(_ status: String?) throws(SystemdError) -> String {
        guard let status else { return "" }
        return "\nSTATUS=" + (try checked(status))
    }

    private static func checked(_ text: String) throws(SystemdError) -> String {
        guard !text.contains("\n") else {
            throw SystemdError(.invalidArgument, call: "sd_notify", "a STATUS= text must be one line: \(text.debugDescription)")
        }
        return text
    }
}
