// Harbor — the name server: the listening socket, the per-uid bootstrap ports and the table of names.
import Glibc  // types only: uid_t
import HarborPorts
import HarborRunLoop
import HarborSystem
import HarborTransport

/// The bootstrap name server (what `harbord` runs), on a run loop.
///
/// It listens on an `AF_UNIX` `SOCK_SEQPACKET` socket; each connection gets
/// a send right to the bootstrap port of its uid (from `SO_PEERCRED`) and is
/// closed. Requests to those ports look up, check in, register, unregister
/// and list names (Docs/Bootstrap.md). Every decision rests on the identity
/// the kernel attached to the request (`trailer.sender`), never on bytes or
/// on what a relay claims. Names live in the caller's uid's scope, except
/// names the policy shares. Declared names get their port at start-up, so
/// messages sent before their service starts wait for it; a check-in moves
/// the port, with them, to the service, each keeping its sender. The server
/// keeps one send right to each name's port and answers look-ups with copies
/// of it (they share its connection), and answers only into the asker's own
/// process.
///
/// What a uid can make the server hold is bounded (``BootstrapQuotas``).
///
/// **Cost:** per request, one message in and one reply out; per name a
/// service holds, two descriptors (its port's right), charged to its owner.
/// Idle, it costs nothing: one epoll wait.
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
        /// Connections to the bootstrap ports (one per connected process, roughly).
        public var clients: Int
        public var description: String { "serving \(names) names, \(clients) clients" }
    }

    /// The path it listens on, when it bound one itself.
    public let socketPath: String?
    /// The limits it enforces.
    public let quotas: BootstrapQuotas
    /// Called on the loop's thread after each batch of requests with the new counts.
    public var onChange: (@Sendable (Summary) -> Void)?

    /// Where the log lines go (``init(endpoint:policy:quotas:unitStarter:log:)``'s `log`).
    let logLine: @Sendable (LogLevel, String, [(String, String)]) -> Void
    /// How look-ups start units: chosen by ``start(on:mode:)``.
    var starter = UnitStarter(mechanism: .none)
    let unitStarterOverride: String?
    let listener: SharedDescriptor
    /// Notifications the server asked for: dead sessions, idle uid ports.
    let notices = ReceiveRight()
    var watches: [DescriptorWatch] = []
    var users: [uid_t: UserPort] = [:]
    var userByPort: [PortName: uid_t] = [:]
    var sessions: [PortName: Session] = [:]
    /// The names whose port each of the server's held rights reaches.
    var heldPorts: [PortName: Set<NameKey>] = [:]
    /// For each of those ports, how many of its names each owner has (a
    /// port's right is charged once to each owner with a name reaching it).
    var heldPortOwners: [PortName: [uid_t: Int]] = [:]
    var charges: [uid_t: UserCharges] = [:]
    // @exclusivity(unchecked), here and on `replyRegistrations`: read on
    // every request, on the loop's thread alone, where nothing reenters
    // them; the runtime check cost a call pair and a thread-local lookup each.
    @exclusivity(unchecked) var entries = NameTable()
    var budget: DescriptorBudget
    /// Waiting ports with senders in other processes: about five descriptors
    /// each (eventfd, epoll set, slot counter, both ends of the shared connection), the server's own.
    var watchedWaitingPorts = 0
    /// The reply right of the latest request that carried a send right (a
    /// client's shared reply right, `BootstrapReplies`): kept, so the next
    /// request from that client, carrying a copy of it, finds its port known
    /// here and its redundant descriptors are simply closed, instead of
    /// making a proxy and mapping its slot counter each time. Two
    /// descriptors at most, the server's own.
    var recentReplyRight: SendRight?
    /// Reply rights clients registered, so their requests carry none.
    @exclusivity(unchecked) var replyRegistrations = ReplyRegistrations()
    /// Out-of-descriptor failures of `accept`: the pause before the next try, what to log.
    var acceptBackoff = AcceptBackoff()
    var loop: Loop?
    var mode: LoopMode = .default
    /// What it reports through swift-metrics (nothing with no backend).
    let metrics = ServerMetrics()
    private var lastSummary: Summary?
    private var events = EventWindow()

    /// Opens the endpoint and declares the policy's names.
    /// - Parameters:
    ///   - endpoint: where to listen for clients.
    ///   - policy: the names declared up front and who may use them.
    ///   - quotas: what one uid may make the server hold.
    ///   - unitStarter: the program run as `PROGRAM start --no-block UNIT` to
    ///     activate a declared name's unit; nil: request files or `systemctl`,
    ///     as `UnitStarter` chooses when the server starts.
    ///   - log: receives one line per event, from the loop's thread, with
    ///     its fields: a line about a name has `name`, `scope` (`user:UID`
    ///     or `shared`) and, where a process caused it, `uid` and `pid` (the
    ///     kernel's word). `harbord` writes them as journal fields.
    /// - Throws: ``BootstrapError/Code/unreachable`` if it cannot listen.
    public init(
        endpoint: Endpoint, policy: BootstrapPolicy = BootstrapPolicy(), quotas: BootstrapQuotas = BootstrapQuotas(),
        unitStarter: String? = nil,
        log: @escaping @Sendable (LogLevel, String, [(String, String)]) -> Void = { _, _, _ in }
    ) throws(BootstrapError) {
        self.logLine = log
        self.quotas = quotas
        unitStarterOverride = unitStarter
        switch endpoint {
        case .adopted(let fd):
            guard SeqPacketSocket.isListening(fd) else {
                throw BootstrapError(.unreachable, "descriptor \(fd) is not a listening SOCK_SEQPACKET socket")
            }
            DescriptorIO.setNonBlocking(fd)
            DescriptorIO.setCloseOnExec(fd)
            listener = SharedDescriptor(taking: fd)
            socketPath = nil
        case .path(let path):
            listener = try Self.bind(path)
            socketPath = path
        }
        budget = DescriptorBudget(quotas: quotas)
        for declaration in policy.declarations {
            let key = NameKey(scope: declaration.isShared ? .shared : .user(declaration.owner), name: declaration.name)
            let entry = NameEntry(key: key, origin: .declared, owner: declaration.owner, unit: declaration.unit)
            entry.waiting = WaitingPort()
            entries[key] = entry
        }
    }

    /// Starts serving on `loop` (call on the loop's thread; run the loop after).
    /// - Throws: ``BootstrapError/Code/badRequest`` off the loop's thread or for `.common`.
    public func start(on loop: Loop, mode: LoopMode = .default) throws(BootstrapError) {
        self.loop = loop
        self.mode = mode
        let noticeDescriptor: CInt
        do { noticeDescriptor = try notices.withReadinessDescriptor { $0 } } catch {
            throw BootstrapError(.unreachable, "the notification port has no readiness descriptor: \(error)")
        }
        guard let accepting = DescriptorWatch(listener.rawValue, loop: loop, mode: mode, label: "bootstrap socket", { [unowned self] in
                  self.acceptConnections()
              }),
              let noticing = DescriptorWatch(noticeDescriptor, loop: loop, mode: mode, label: "bootstrap notices",
                                             order: Self.noticesFirst, { [unowned self] in
                  self.serveNotices()
              }) else {
            throw BootstrapError(.badRequest, "start(on:) must run on the loop's own thread, in a named mode")
        }
        watches = [accepting, noticing]
        // Clients trust this process as their name server (RelayTrust): its
        // word on a right's slot counter spares them an fstat and SO_TYPE.
        SlotCounterVouch.startVouching()
        budget = DescriptorBudget(quotas: quotas)
        starter = UnitStarter(override: unitStarterOverride)
        let declared = entries.count
        log(.info, "listening on \(socketPath ?? "a passed socket"); \(declared) declared name\(declared == 1 ? "" : "s"); "
            + "descriptors: limit \(budget.limit), reserve \(budget.reserve)"
            + "; " + starter.summary)
        reportIfChanged()
    }

    /// Stops accepting, releases every port it holds (their senders see a
    /// dead name) and removes the socket file it made. Call on the loop's thread.
    public func stop() {
        for watch in watches { watch.invalidate() }
        watches = []
        for user in users.values { user.watch?.invalidate() }
        for entry in entries.values { entry.waiting?.watch?.invalidate() }
        let count = entries.count
        entries = [:]
        sessions = [:]
        recentReplyRight = nil
        replyRegistrations.removeAll()
        heldPorts = [:]
        heldPortOwners = [:]
        users = [:]
        userByPort = [:]
        charges = [:]
        if let socketPath { FileSystem.remove(socketPath) }
        log(.info, "stopped; released \(count) name\(count == 1 ? "" : "s")")
    }

    /// The notification port's place among the loop's descriptors: before
    /// every bootstrap port, so a death that happened before a request
    /// arrived (its hang-up already in the kernel when the loop looked) is
    /// dealt with before the request, in the same pass. Look-ups rely on
    /// it instead of checking the holder's liveness themselves.
    static let noticesFirst = -1

    /// The current counts (loop's thread).
    public var summary: Summary {
        Summary(names: entries.count, clients: users.values.reduce(0) { $0 + $1.clients })
    }

    /// A send right to the bootstrap port of this process's uid, for a client
    /// in this process (loop's thread).
    public func makeBootstrapRight() -> SendRight? { userPort(for: ProcessControl.effectiveUserID)?.port.makeSendRight() }

    func reportIfChanged() {
        let current = summary
        if current != lastSummary {
            lastSummary = current
            onChange?(current)
        }
    }

    // MARK: Logging

    /// The events any process can cause (check-ins, registrations, names
    /// gone, refused connections) are logged one by one up to
    /// ``EventWindow/perSecond`` a second; beyond that they are counted and
    /// summed up a second later, so no uid can flood the journal.
    func logEvent(_ level: LogLevel, _ text: String, _ fields: [(String, String)] = []) {
        let now = ContinuousClock.now
        if now - events.start >= .seconds(1) {
            flushEvents()
            events.start = now
            events.logged = 0
        }
        if events.logged < EventWindow.perSecond {
            events.logged += 1
            log(level, text, fields)
            return
        }
        if events.suppressed == 0, let loop {
            loop.perform(after: .seconds(1), inModes: [mode]) { [weak self] in self?.flushEvents() }
        }
        events.suppressed += 1
    }

    /// One line to the log, with its fields.
    func log(_ level: LogLevel, _ text: String, _ fields: [(String, String)] = []) {
        logLine(level, text, fields)
    }

    /// The fields of a line about the name `key`, caused by `process` if given.
    static func fields(_ key: NameKey, _ process: ProcessIdentity? = nil) -> [(String, String)] {
        let scope: String
        switch key.scope {
        case .user(let uid): scope = "user:\(uid)"
        case .shared: scope = "shared"
        }
        var fields = [("name", key.name), ("scope", scope)]
        if let process { fields += [("uid", String(process.uid)), ("pid", String(process.pid))] }
        return fields
    }

    private func flushEvents() {
        guard events.suppressed > 0 else { return }
        log(.info, "… and \(events.suppressed) more name events (check-ins, registrations, departures) in that second")
        events.suppressed = 0
    }

    /// Events logged in the current second.
    struct EventWindow {
        static let perSecond = 20
        var start = ContinuousClock.now
        var logged = 0
        var suppressed = 0
    }

    // MARK: The socket

    private static func bind(_ path: String) throws(BootstrapError) -> SharedDescriptor {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            do { try FileSystem.makeDirectory(directory, mode: 0o755) } catch {
                throw BootstrapError(.unreachable, "cannot make \(directory): \(SystemError.reason(error.code))")
            }
        }
        if let isSocket = FileSystem.isSocket(path) {
            guard isSocket else {
                throw BootstrapError(.unreachable, "\(path) exists and is not a socket")
            }
            if (try? SeqPacketSocket.connect(to: path)) != nil {
                throw BootstrapError(.unreachable, "another name server is already listening on \(path)")
            }
            FileSystem.remove(path)  // stale: its server is gone
        }
        do { return try SeqPacketSocket.listen(at: path) } catch {
            throw BootstrapError(.unreachable, "cannot listen on \(path): \(error)")
        }
    }
}
