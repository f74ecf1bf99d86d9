// Harbor — harbord's metrics socket (`--metrics-socket PATH`): the Prometheus text exposition over a Unix stream socket.
import CoreMetrics
import Glibc
import HarborBootstrap
import HarborRunLoop
import HarborSystem
import Logging
import Prometheus

/// Serves `GET /metrics` (HTTP/1.0, one request a connection) on a Unix
/// stream socket with everything reported through swift-metrics in the
/// Prometheus text format (swift-prometheus' `PrometheusCollectorRegistry`).
///
/// Made only with `--metrics-socket`: a harbord without it bootstraps no
/// metrics backend and opens nothing. The socket is bound (mode 0660) before
/// harbord gives up root, like the bootstrap socket; a stale socket file is
/// replaced, a live one (another process serving it) refused.
///
/// One thread of its own accepts and serves one scrape at a time, so it
/// never blocks the run loop: a client has ``requestDeadline`` from its
/// connection to send the request line and headers and to read the answer,
/// then it is closed; one that connects and sends nothing holds only this
/// thread, and only that long. Before each answer the server's gauges are
/// computed on the loop (``BootstrapServer/reportMetrics()``), waited for
/// at most ``refreshDeadline`` (a busy loop yields the values of the scrape
/// before).
///
/// **Thread safety:** ``start(server:loop:logger:)`` and ``stop()`` from
/// one thread (harbord's `Daemon`).
final class MetricsEndpoint: @unchecked Sendable {
    // @unchecked: the descriptors and the registry never change after init;
    // the thread handle is only touched under its lock.

    /// How long one connection may take, from accept to the last byte written.
    static let requestDeadline: Duration = .seconds(2)
    /// How long a scrape waits for the loop to compute the gauges.
    static let refreshDeadline: Duration = .seconds(1)
    /// The longest request head read (request line and headers).
    static let maximumRequest = 8192

    /// The socket's path.
    let path: String
    /// Where the metrics go: what the factory bootstrapped by ``bootstrapMetrics()`` reports to.
    let registry: PrometheusCollectorRegistry
    private let listener: CInt
    /// Signalled by ``stop()``: the thread returns.
    private let stopSignal: EventDescriptor
    /// Signalled on the loop when the gauges are computed.
    private let refreshed: EventDescriptor
    private let thread = HarborLock<SystemThread?>(nil)

    /// Binds `path` (its directory must exist), mode 0660.
    /// - Throws: ``StartupError`` saying what failed.
    init(path: String, registry: PrometheusCollectorRegistry) throws(StartupError) {
        self.path = path
        self.registry = registry
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path), !path.isEmpty else {
            throw StartupError("--metrics-socket \(path): the path is empty or too long for a socket")
        }
        if let isSocket = FileSystem.isSocket(path) {
            guard isSocket else { throw StartupError("--metrics-socket \(path): the file exists and is not a socket") }
            if Self.answers(path) { throw StartupError("--metrics-socket \(path): another process is listening there") }
            FileSystem.remove(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw StartupError("--metrics-socket: socket: \(Self.reason())") }
        let bound = Self.withAddress(path) { bind(fd, $0, $1) }
        guard bound == 0 else {
            let why = Self.reason()
            close(fd)
            throw StartupError("--metrics-socket \(path): bind: \(why)")
        }
        guard chmod(path, 0o660) == 0, listen(fd, 16) == 0 else {
            let why = Self.reason()
            close(fd)
            FileSystem.remove(path)
            throw StartupError("--metrics-socket \(path): chmod or listen: \(why)")
        }
        do {
            stopSignal = try EventDescriptor()
            refreshed = try EventDescriptor()
        } catch {
            close(fd)
            FileSystem.remove(path)
            throw StartupError("--metrics-socket: eventfd: \(error)")
        }
        listener = fd
    }

    deinit { close(listener) }

    /// Bootstraps swift-metrics with a Prometheus factory on `registry`
    /// (once per process, before the server is made), with buckets for
    /// the name server's request times (10 µs to 1 s) instead of the
    /// factory's 5 ms to 10 s.
    static func bootstrapMetrics(into registry: PrometheusCollectorRegistry) {
        var factory = PrometheusMetricsFactory(registry: registry)
        let buckets: [Duration] = [.microseconds(10), .microseconds(25), .microseconds(50), .microseconds(100),
                                   .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
                                   .milliseconds(5), .milliseconds(10), .milliseconds(100), .seconds(1)]
        factory.durationHistogramBuckets["harbor_bootstrap_request_duration_seconds"] = buckets
        factory.durationHistogramBuckets["harbor_client_lookup_duration_seconds"] = buckets
        MetricsSystem.bootstrap(factory)
    }

    /// Starts the serving thread: scrapes compute `server`'s gauges on `loop`.
    func start(server: BootstrapServer, loop: Loop, logger: Logger) throws {
        let started = try SystemThread.spawn { [self] in serve(server: server, loop: loop, logger: logger) }
        thread.withLock { $0 = started }
        logger.info("metrics: serving GET /metrics on \(path)")
    }

    /// Stops the thread (after the scrape it may be serving), closes the
    /// socket and removes its file (if harbord may still write its directory).
    func stop() {
        stopSignal.signal()
        if let running = thread.withLock({ value -> SystemThread? in
            defer { value = nil }
            return value
        }) {
            running.join()
        }
        shutdown(listener, Int32(SHUT_RDWR))
        FileSystem.remove(path)
    }

    // MARK: The thread

    private func serve(server: BootstrapServer, loop: Loop, logger: Logger) {
        while true {
            var waits = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                         pollfd(fd: stopSignal.rawValue, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&waits, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || waits[1].revents != 0 { return }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
            answer(connection, server: server, loop: loop, logger: logger)
            close(connection)
        }
    }

    /// Reads one request head and writes one answer, within ``requestDeadline``.
    private func answer(_ connection: CInt, server: BootstrapServer, loop: Loop, logger: Logger) {
        let deadline = ContinuousClock.now + Self.requestDeadline
        guard let head = readHead(connection, before: deadline) else {
            logger.debug("metrics: a client sent no complete request in time")
            return
        }
        let words = head.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
            .split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        var status = "200 OK"
        var body: [UInt8] = []
        var type = "text/plain; charset=utf-8"
        if words.count < 2 || !(words.count == 2 || words[2].hasPrefix("HTTP/")) {
            status = "400 Bad Request"
            body = Array("bad request\n".utf8)
        } else if words[0] != "GET" {
            status = "405 Method Not Allowed"
            body = Array("only GET /metrics\n".utf8)
        } else if words[1] != "/metrics" && !words[1].hasPrefix("/metrics?") {
            status = "404 Not Found"
            body = Array("not found: GET /metrics\n".utf8)
        } else {
            refreshGauges(server: server, loop: loop)
            registry.emit(into: &body)
            body = MetricHelp.annotated(body)
            type = "text/plain; version=0.0.4; charset=utf-8"
        }
        let header = "HTTP/1.0 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
            + "Connection: close\r\n\r\n"
        _ = writeAll(connection, Array(header.utf8) + body, before: deadline)
    }

    /// The request line and headers (up to the blank line, or all that came
    /// before the client closed its side); nil at the deadline or past
    /// ``maximumRequest`` bytes.
    private func readHead(_ connection: CInt, before deadline: ContinuousClock.Instant) -> [UInt8]? {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while head.count < Self.maximumRequest {
            guard wait(connection, for: Int16(POLLIN), before: deadline) else { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return nil
            }
            if count == 0 { return head.isEmpty ? nil : head }
            head += chunk[..<count]
            if Self.endsHead(head) { return head }
        }
        return nil
    }

    /// Whether `head` holds the blank line that ends an HTTP request head.
    private static func endsHead(_ head: [UInt8]) -> Bool {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        for index in head.indices.dropFirst() where head[index] == lf {
            if head[index - 1] == lf { return true }
            if index >= 2, head[index - 1] == cr, head[index - 2] == lf { return true }
        }
        return false
    }

    private func writeAll(_ connection: CInt, _ bytes: [UInt8], before deadline: ContinuousClock.Instant) -> Bool {
        var sent = 0
        while sent < bytes.count {
            guard wait(connection, for: Int16(POLLOUT), before: deadline) else { return false }
            let count = bytes.withUnsafeBytes {
                send(connection, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                return false
            }
            sent += count
        }
        return true
    }

    /// Waits until `connection` is ready for `events`, or stop is asked, or the deadline.
    private func wait(_ connection: CInt, for events: Int16, before deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var waits = [pollfd(fd: connection, events: events, revents: 0),
                         pollfd(fd: stopSignal.rawValue, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&waits, 2, Int32(max(1, left / .milliseconds(1))))
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || waits[1].revents != 0 { return false }
            if ready > 0 { return true }
        }
    }

    /// Computes the server's gauges on its loop and waits for them (at most
    /// ``refreshDeadline``; a late one is drained by the next scrape).
    private func refreshGauges(server: BootstrapServer, loop: Loop) {
        refreshed.drain()
        loop.perform { [self] in
            server.reportMetrics()
            refreshed.signal()
        }
        var waits = [pollfd(fd: refreshed.rawValue, events: Int16(POLLIN), revents: 0)]
        _ = poll(&waits, 1, Int32(Self.refreshDeadline / .milliseconds(1)))
        refreshed.drain()
    }

    // MARK: Helpers

    /// Whether something accepts connections at `path`.
    private static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withAddress(path) { connect(fd, $0, $1) } == 0
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> CInt) -> CInt {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
