// Harbor — the name server: the listening socket, the bootstrap port and the table of names.
import CHarborLinux
import Glibc
import HarborPorts
import HarborRunLoop

/// The bootstrap name server (what `harbord` runs), on a run loop.
///
/// It listens on an `AF_UNIX` `SOCK_SEQPACKET` socket; each connection gets
/// a send right to the bootstrap port and is closed. Requests to that port
/// look up, check in, register, unregister and list names (Docs/Bootstrap.md).
/// Names live in the caller's uid's scope (the uid the kernel attached to
/// the request), except names the policy shares. Declared names get their
/// receive right at start-up, so messages sent before their service starts
/// wait for it; a check-in moves the right, queue and all, to the service.
///
/// **Cost:** per request, one message in and one reply out (plus a socket
/// pair per right it hands out). Idle, it costs nothing: one epoll wait.
/// **Thread safety:** make it on any thread; ``start(on:mode:)``,
/// ``stop()`` and ``summary`` on the loop's thread, where it runs.
/// **Darwin equivalent:** launchd's bootstrap server.
public final class BootstrapServer: @unchecked Sendable {
    // @unchecked: after init, all mutable state is used only on the thread of
    // the loop passed to start(on:) (the watches' handlers run there).

    /// Where the server listens.
    public enum Endpoint: Sendable {
        /// Bind this path (its directory is created; a stale socket replaced,
        /// a live one refused); the file is removed by ``stop()``.
        case path(String)
        /// A listening `SOCK_SEQPACKET` socket passed in (socket activation);
        /// the server owns it from now on and never unlinks its path.
        case adopted(CInt)
    }

    /// How much a log line matters (mapped to syslog priorities by `harbord`).
    public enum LogLevel: Int, Sendable, Comparable {
        case debug, info, notice, warning, error
        public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Counts for `STATUS=`.
    public struct Summary: Sendable, Hashable, CustomStringConvertible {
        /// Names in the table.
        public var names: Int
        /// Send rights to the bootstrap port alive (one per connected process, roughly).
        public var clients: Int
        public var description: String { "serving \(names) names, \(clients) clients" }
    }

    /// The path it listens on, when it bound one itself.
    public let socketPath: String?
    /// Called on the loop's thread after each batch of requests with the new counts.
    public var onChange: (@Sendable (Summary) -> Void)?

    let bootstrap = ReceiveRight()
    let log: @Sendable (LogLevel, String) -> Void
    let starter: UnitStarter
    private let listener: SharedDescriptor
    private var watches: [DescriptorWatch] = []
    var entries: [NameKey: NameEntry] = [:]
    /// Which name a dead-name notification is about.
    var byPort: [PortName: NameKey] = [:]
    var loop: Loop?
    var mode: LoopMode = .default
    private var lastSummary: Summary?

    /// Opens the endpoint and declares the policy's names.
    /// - Parameters:
    ///   - unitStarter: the program run as `PROGRAM start --no-block UNIT` to
    ///     activate a declared name's unit; nil: `systemctl` when systemd runs.
    ///   - log: receives one line per event, from the loop's thread.
    /// - Throws: ``BootstrapError/Code/unreachable`` if it cannot listen.
    public init(
        endpoint: Endpoint, policy: BootstrapPolicy = BootstrapPolicy(), unitStarter: String? = nil,
        log: @escaping @Sendable (LogLevel, String) -> Void = { _, _ in }
    ) throws(BootstrapError) {
        self.log = log
        starter = UnitStarter(override: unitStarter)
        switch endpoint {
        case .adopted(let fd):
            guard UnixSocket.isListeningSeqPacket(fd) else {
                throw BootstrapError(.unreachable, "descriptor \(fd) is not a listening SOCK_SEQPACKET socket")
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            listener = SharedDescriptor(taking: fd)
            socketPath = nil
        case .path(let path):
            listener = try Self.bind(path)
            socketPath = path
        }
        do { try bootstrap.setQueueLimit(256) } catch {}
        for declaration in policy.declarations {
            let key = NameKey(scope: declaration.isShared ? .shared : .user(declaration.owner), name: declaration.name)
            entries[key] = NameEntry(key: key, origin: .declared, owner: declaration.owner, unit: declaration.unit)
        }
    }

    /// Starts serving on `loop` (call on the loop's thread; run the loop after).
    /// - Throws: ``BootstrapError/Code/badRequest`` off the loop's thread or for `.common`.
    public func start(on loop: Loop, mode: LoopMode = .default) throws(BootstrapError) {
        self.loop = loop
        self.mode = mode
        let portDescriptor: CInt
        do { portDescriptor = try bootstrap.withReadinessDescriptor { $0 } } catch {
            throw BootstrapError(.unreachable, "the bootstrap port has no readiness descriptor: \(error)")
        }
        guard let accepting = DescriptorWatch(listener.rawValue, loop: loop, mode: mode, label: "bootstrap socket", { [unowned self] in
                  self.acceptConnections()
              }),
              let serving = DescriptorWatch(portDescriptor, loop: loop, mode: mode, label: "bootstrap port", { [unowned self] in
                  self.serveRequests()
              }) else {
            throw BootstrapError(.badRequest, "start(on:) must run on the loop's own thread, in a named mode")
        }
        watches = [accepting, serving]
        let declared = entries.count
        log(.info, "listening on \(socketPath ?? "a passed socket"); \(declared) declared name\(declared == 1 ? "" : "s")"
            + (starter.program == nil ? "; no systemd: look-ups will not start units" : ""))
        reportIfChanged()
    }

    /// Stops accepting, releases every port it holds (their senders see a
    /// dead name) and removes the socket file it made. Call on the loop's thread.
    public func stop() {
        for watch in watches { watch.invalidate() }
        watches = []
        let count = entries.count
        entries = [:]
        byPort = [:]
        if let socketPath { unlink(socketPath) }
        log(.info, "stopped; released \(count) name\(count == 1 ? "" : "s")")
    }

    /// The current counts (loop's thread).
    public var summary: Summary {
        Summary(names: entries.count, clients: bootstrap.status.sendRights)
    }

    /// A send right to the bootstrap port, for a client in this process.
    public func makeBootstrapRight() -> SendRight { bootstrap.makeSendRight() }

    func reportIfChanged() {
        let current = summary
        if current != lastSummary {
            lastSummary = current
            onChange?(current)
        }
    }

    // MARK: Connections

    private func acceptConnections() {
        for _ in 0..<64 {
            let connection: SharedDescriptor
            do {
                guard let accepted = try UnixSocket.accept(on: listener.rawValue) else { break }
                connection = accepted
            } catch {
                log(.warning, "accept: \(error)")
                break
            }
            var welcome = Message(id: 0, text: "harbor bootstrap")
            welcome.attach(bootstrap.makeSendRight())
            do { try FirstMessage.send(welcome, over: connection, timeout: .zero) } catch {
                log(.debug, "a client left before its bootstrap right was sent: \(error.detail)")
            }
        }
        reportIfChanged()
    }

    private func serveRequests() {
        for _ in 0..<64 {
            guard let message = bootstrap.tryReceive() else { break }
            handle(message)
        }
        reportIfChanged()
    }

    // MARK: The socket

    private static func bind(_ path: String) throws(BootstrapError) -> SharedDescriptor {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw BootstrapError(.unreachable, "cannot make \(directory): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFSOCK else {
                throw BootstrapError(.unreachable, "\(path) exists and is not a socket")
            }
            if (try? UnixSocket.connect(to: path)) != nil {
                throw BootstrapError(.unreachable, "another name server is already listening on \(path)")
            }
            unlink(path)  // stale: its server is gone
        }
        do { return try UnixSocket.listen(at: path) } catch {
            throw BootstrapError(.unreachable, "cannot listen on \(path): \(error)")
        }
    }
}
