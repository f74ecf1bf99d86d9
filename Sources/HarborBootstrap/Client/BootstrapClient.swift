// Harbor — a process's connection to the name server: look up, check in, register, list.
import Glibc  // types only: pid_t
import HarborPorts
import Synchronization
import HarborSystem

/// A connection to the bootstrap name server (`harbord`).
///
/// Connecting to the server's socket yields this process's first right, a
/// send right to its uid's bootstrap port (the server sends it down the
/// fresh connection, which is then closed). Every request is a message to
/// that port carrying a reply right (a copy of one send right to this
/// client's reply port, `BootstrapReplies`); the server learns the
/// caller's uid from the kernel's credentials on the message, never from
/// its bytes.
///
/// ```swift
/// let bootstrap = try BootstrapClient()                 // finds the socket itself
/// let inbox = try bootstrap.checkIn("com.example.echo")  // the service side
/// let echo = try bootstrap.lookUp("com.example.echo")    // any client
/// ```
///
/// The server keeps a send right to the port of each name a process checks
/// in or registers and answers look-ups with copies of it. The process's
/// **session** (a thread, started with the first of them; see
/// Docs/Bootstrap.md) tells the server when one of those ports dies, and
/// when the server restarts on the same socket it connects again and checks
/// them all in again by itself. A name stays while its port lives, whether
/// or not this object does.
///
/// **Cost:** connecting is one `connect` and one packet. Each request is a
/// round trip through the server: two packets (every request's reply right
/// passes the reply port's one connection, made with the first request); a
/// look-up's reply carries a copy of the server's right to the name's port,
/// sharing its connection.
/// **Thread safety:** any thread; requests from several threads are served
/// one at a time (one reply port, under a lock).
/// **Darwin equivalent:** `bootstrap_look_up`, `bootstrap_check_in`,
/// `bootstrap_register` on `bootstrap_port`.
public final class BootstrapClient: Sendable {
    /// How long each request waits for its reply.
    public let timeout: Duration
    /// The socket it connected to ("" for a right handed in).
    public var socketPath: String { link.socketPath }
    private let link: BootstrapLink
    /// The reply port and its shared reply right, replaced after a timeout
    /// so a late reply cannot answer the next request.
    private let replies: HarborLock<BootstrapReplies>
    private let session = HarborLock<BootstrapSession?>(nil)

    /// Connects to the name server at `socketPath` (default:
    /// ``BootstrapAddress/clientPath``) and takes its bootstrap right.
    /// - Throws: ``BootstrapError/Code/unreachable`` if nothing answers there,
    ///   ``BootstrapError/Code/overQuota`` if the caller's uid holds as many
    ///   connections as it may.
    public init(socketPath: String? = nil, timeout: Duration = .seconds(5)) throws(BootstrapError) {
        self.timeout = timeout
        link = try BootstrapLink(socketPath: socketPath ?? BootstrapAddress.clientPath, timeout: timeout)
        replies = HarborLock(BootstrapReplies())
    }

    /// Uses an existing send right to a bootstrap port (one passed in a
    /// message, or an in-process server's). Such a client cannot connect
    /// again if that server goes.
    public init(bootstrapPort: SendRight, timeout: Duration = .seconds(5)) {
        self.timeout = timeout
        link = BootstrapLink(right: bootstrapPort, timeout: timeout)
        replies = HarborLock(BootstrapReplies())
    }

    deinit { session.withLock { $0 }?.clientLeft() }

    /// Waits until every session thread of this process has ended and let go
    /// of its session (or `timeout` passes); true if so. A session outlives
    /// its client while one of its names lives, and ends on its own thread
    /// after the last one dies, closing its ports there: whoever counts this
    /// process's descriptors afterwards (a test) waits here first.
    package static func waitUntilSessionsEnd(timeout: Duration) -> Bool {
        BootstrapSession.waitUntilQuiescent(timeout: timeout)
    }

    /// The send right to the bootstrap port in use now (a new one after the
    /// server restarted).
    public var bootstrapPort: SendRight { link.current.right }

    /// A send right to the service registered or checked in as `name`, in
    /// the caller's own scope or among shared names. A declared name whose
    /// service has not checked in yet is found too: messages wait for it
    /// (and the server asks systemd to start its unit).
    /// The server answers from the one send right it keeps to the name's
    /// port, so a look-up needs nothing from the holder and costs it nothing.
    /// - Throws: ``BootstrapError/Code/notFound``, ``BootstrapError/Code/invalidName``,
    ///   transport errors.
    public func lookUp(_ name: String) throws(BootstrapError) -> SendRight {
        var reply = try ClientMetrics.lookUp { () throws(BootstrapError) in try request(BootstrapRequest.lookUp, name: name) }
        do { return try reply.takeSendRight(at: 0) } catch {
            throw BootstrapError(.badReply, "look-up reply without a send right: \(error.detail)", underlying: error)
        }
    }

    /// Claims `name` and returns its receive right: a new port, or the port of
    /// a declared name with every message sent to it so far. A name not
    /// declared is declared now in the caller's scope, and removed when the
    /// receive right dies; a declared name goes back to the server when its
    /// holder dies, and waits for the next check-in.
    /// - Throws: ``BootstrapError/Code/alreadyActive`` if a live process holds it,
    ///   ``BootstrapError/Code/notPermitted`` for a shared name another uid owns,
    ///   ``BootstrapError/Code/nameInUse`` if it is registered,
    ///   ``BootstrapError/Code/overQuota`` at the uid's limit of names.
    public func checkIn(_ name: String) throws(BootstrapError) -> ReceiveRight {
        try BootstrapName.check(name)
        let session = try ensureSession()
        guard session.willHold(name, registered: false) else {
            throw BootstrapError(.alreadyActive, "\(name) is checked in by this process")
        }
        let offered = ReceiveRight()
        var reply: Message
        // The server keeps a send right to the name's port and answers look-ups with copies of it.
        let carried = [session.right, offered.makeSendRight()]
        do { reply = try request(BootstrapRequest.checkIn, name: name, carrying: carried) } catch {
            session.dropped(name)
            throw error
        }
        // The server's port when messages already wait in it, else the one made here.
        let port: ReceiveRight
        if let waited = try? reply.takeReceiveRight(at: 0) { port = waited } else { port = offered }
        session.holds(name, key: reply.text, right: port.makeSendRight())
        return port
    }

    /// Publishes `right` as `name` in the caller's scope, until the port dies
    /// or ``unregister(_:)``. The server keeps a copy of the right and
    /// answers look-ups with copies of it.
    /// - Throws: ``BootstrapError/Code/nameInUse`` if the name is taken in that scope.
    public func register(_ name: String, _ right: SendRight) throws(BootstrapError) {
        try BootstrapName.check(name)
        let session = try ensureSession()
        guard session.willHold(name, registered: true) else {
            throw BootstrapError(.nameInUse, "\(name) is held by this process")
        }
        let reply: Message
        do { reply = try request(BootstrapRequest.register, name: name, carrying: [session.right, right]) } catch {
            session.dropped(name)
            throw error
        }
        session.holds(name, key: reply.text, right: right)
    }

    /// Removes a name the caller registered or checked in without declaration.
    /// - Throws: ``BootstrapError/Code/notFound``, ``BootstrapError/Code/notPermitted`` (declared names stay).
    public func unregister(_ name: String) throws(BootstrapError) {
        _ = try request(BootstrapRequest.unregister, name: name)
        session.withLock { $0 }?.dropped(name)
    }

    /// Every name the caller can see: its own scope and the shared names,
    /// by name (fetched a page at a time: any number of names).
    public func list() throws(BootstrapError) -> [BootstrapEntry] {
        var entries: [BootstrapEntry] = []
        var cursor: BootstrapListing.Key?
        while true {
            let reply = try request(BootstrapRequest.list, body: cursor.map { Array($0.cursor.utf8) } ?? [])
            guard let page = BootstrapListing.decode(reply.text, after: cursor) else {
                throw BootstrapError(.badReply, "the listing did not decode")
            }
            entries += page.entries
            guard page.more, let last = page.entries.last else { return entries }
            cursor = BootstrapListing.key(last)
        }
    }

    private func ensureSession() throws(BootstrapError) -> BootstrapSession {
        session.withLock { session in
            if let existing = session { return existing }
            let made = BootstrapSession(link: link)
            session = made
            return made
        }
    }

    private func request(_ id: Int32, name: String, carrying rights: [SendRight] = []) throws(BootstrapError) -> Message {
        guard let body = BootstrapName.body(name) else { throw BootstrapName.invalid(name) }
        return try request(id, body: body, carrying: rights)
    }

    func request(
        _ id: Int32, body: [UInt8], carrying rights: [SendRight] = [], answeredBy: pid_t? = nil
    ) throws(BootstrapError) -> Message {
        let link = self.link
        let outcome = replies.withLock { replies -> Result<Message, BootstrapError> in
            do throws(BootstrapError) {
                return .success(try link.exchange(id, body: body, carrying: rights, answeredBy: answeredBy, replies: &replies))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}

extension BootstrapName {
    /// Throws ``BootstrapError/Code/invalidName`` unless `name` is valid.
    static func check(_ name: String) throws(BootstrapError) {
        guard isValid(name) else { throw invalid(name) }
    }

    /// The error for `name`, not a valid service name.
    static func invalid(_ name: String) -> BootstrapError {
        BootstrapError(.invalidName, "\(name.debugDescription) is not a valid service name "
                       + "(1–\(maximumLength) of A–Z a–z 0–9 . _ - : @)")
    }
}
