// Harbor — a client's link to the name server: its bootstrap right, who serves it, connecting again.
import Glibc  // types only: pid_t
import HarborPorts
import HarborSystem
import HarborTransport

/// The bootstrap right a process uses now, shared by its `BootstrapClient`
/// and its session, and replaced when the server restarts on the same
/// socket (a new server, new ports: the old right is a dead name).
///
/// **Thread safety:** any thread.
final class BootstrapLink: Sendable {
    /// What the link is now.
    struct Current: Sendable {
        /// A send right to the caller's uid's bootstrap port.
        var right: SendRight
        /// The server, as the kernel reported it on the welcome; nil for a
        /// right handed in. Trusted to say who sent the messages it relays
        /// (``RelayTrust``) while this link uses it.
        var server: ProcessIdentity?
        /// Bumped on each reconnection.
        var generation: Int
    }

    /// The socket, or "" for a right handed in (no way to connect again).
    let socketPath: String
    let timeout: Duration
    private let state: HarborLock<Current>

    /// Connects to `socketPath`.
    init(socketPath: String, timeout: Duration) throws(BootstrapError) {
        self.socketPath = socketPath
        self.timeout = timeout
        let (right, server) = try Self.connect(socketPath, timeout: timeout)
        RelayTrust.trust(server)
        state = HarborLock(Current(right: right, server: server, generation: 0))
    }

    /// Uses a right handed in (a server in this process, or a right passed in a message).
    init(right: SendRight, timeout: Duration) {
        socketPath = ""
        self.timeout = timeout
        state = HarborLock(Current(right: right, server: nil, generation: 0))
    }

    deinit {
        if let server = current.server { RelayTrust.revoke(server) }
    }

    var current: Current { state.withLock { $0 } }

    /// Connects again unless someone already did since `generation`; the link then.
    /// - Throws: ``BootstrapError/Code/unreachable`` with no socket, or if nothing answers.
    @discardableResult
    func reconnect(after generation: Int, timeout: Duration? = nil) throws(BootstrapError) -> Current {
        let now = current
        guard now.generation == generation else { return now }
        guard !socketPath.isEmpty else {
            throw BootstrapError(.unreachable, "the name server is gone and this client has no socket to find it again")
        }
        let (right, server) = try Self.connect(socketPath, timeout: timeout ?? self.timeout)
        RelayTrust.trust(server)
        var replaced: ProcessIdentity?? = .none
        let updated = state.withLock { link in
            if link.generation == generation {
                replaced = .some(link.server)
                link = Current(right: right, server: server, generation: generation + 1)
            }
            return link
        }
        // The old server's word is no longer taken; a lost race trusts none twice.
        switch replaced {
        case .some(let old): if let old { RelayTrust.revoke(old) }
        case .none: RelayTrust.revoke(server)
        }
        return updated
    }

    /// Connects, and takes the bootstrap right from the welcome (or the
    /// server's refusal, when this uid is at its limit of connections).
    static func connect(_ path: String, timeout: Duration) throws(BootstrapError) -> (SendRight, ProcessIdentity) {
        let connection: SharedDescriptor
        do { connection = try SeqPacketSocket.connect(to: path) } catch {
            throw BootstrapError(.unreachable, "cannot connect to \(path): \(error)")
        }
        var welcome: Message
        do { welcome = try FirstMessage.receive(over: connection, timeout: timeout) } catch {
            throw BootstrapError(.unreachable, "\(path) did not hand out a bootstrap right: \(error.detail)", underlying: error)
        }
        guard welcome.id == 0 else {
            throw BootstrapError(.fromWire(welcome.id), welcome.text.isEmpty ? "refused" : welcome.text)
        }
        do { return (try welcome.takeSendRight(at: 0), welcome.trailer.sender) } catch {
            throw BootstrapError(.badReply, "the welcome message carries no send right", underlying: error)
        }
    }

    /// One request and its reply, through `replies` (replaced after a
    /// timeout, so a late reply cannot answer the next request). A request
    /// that finds the server gone connects again once and is sent again; a
    /// server that dies holding the request is heard at once, through the
    /// dead-name notification `replies` asks for on the bootstrap right.
    ///
    /// A request answered by another process than the server (`answeredBy`:
    /// `harbor ports`, which the server forwards) carries a send-once right
    /// to the reply port, never the registered send right: the other
    /// process can answer once, and cannot keep a way into this port.
    /// Replies from anyone but the server (and `answeredBy`) are passed over.
    func exchange(
        _ id: Int32, body: [UInt8], carrying rights: [SendRight], answeredBy: pid_t? = nil,
        replies: inout BootstrapReplies
    ) throws(BootstrapError) -> Message {
        var link = current
        var attempt = 0
        while true {
            attempt += 1
            if replies.registration?.generation != link.generation {
                replies.registration = .init(generation: link.generation, handle: registeredReplies(on: link, replies: &replies))
            }
            var message: Message
            if answeredBy != nil {
                message = Message(id: id, body: body)
                message.setReplyRight(replies.port.makeSendOnceRight())
            } else if let handle = replies.registration?.handle {
                message = Message(id: BootstrapRequest.viaRegisteredReply(id), body: BootstrapRequest.body(body, endingWith: handle))
            } else {
                message = Message(id: id, body: body)
                message.setReplyRight(replies.right)
            }
            for right in rights { message.attach(right) }
            replies.watch(link)
            do throws(PortError) {
                try link.right.send(message, timeout: timeout)
            } catch {
                if error.code == .deadName, attempt == 1, !socketPath.isEmpty {
                    link = try reconnect(after: link.generation)
                    continue
                }
                throw BootstrapError(.unreachable, "the name server is gone: \(error.detail)", underlying: error)
            }
            return try awaitReply(on: link, from: answeredBy, replies: &replies)
        }
    }

    /// Registers `replies`' right with `link`'s server; the handle, or nil
    /// if the server refused or did not answer (requests then carry the
    /// right). A dead server is found by the request that follows.
    private func registeredReplies(on link: Current, replies: inout BootstrapReplies) -> UInt64? {
        var message = Message(id: BootstrapRequest.registerReplies)
        message.setReplyRight(replies.right)
        replies.watch(link)
        do throws(BootstrapError) {
            do throws(PortError) { try link.right.send(message, timeout: timeout) } catch {
                return nil
            }
            let reply = try awaitReply(on: link, replies: &replies)
            return reply.body.count == 8 ? BootstrapRequest.handle(endingThe: reply.body) : nil
        } catch {
            return nil
        }
    }

    /// The reply to the request just sent over `link`. Notifications about
    /// an earlier link's right (it died, or its request was let go) are
    /// passed over.
    private func awaitReply(
        on link: Current, from other: pid_t? = nil, replies: inout BootstrapReplies
    ) throws(BootstrapError) -> Message {
        // One deadline for the waits after stray messages too.
        let deadline = WaitDeadline(timeout: timeout)
        while true {
            let reply: Message
            do throws(PortError) {
                reply = try replies.port.receive(deadline: deadline)
            } catch {
                replies = BootstrapReplies()
                if error.code == .timedOut {
                    throw BootstrapError(.timedOut, "no reply within \(timeout)", underlying: error)
                }
                throw BootstrapError(.unreachable, "receiving the reply: \(error.detail)", underlying: error)
            }
            if BootstrapReplies.isServerDeath(reply, on: link) {
                // A server that died holding the request: its bootstrap port is gone.
                replies = BootstrapReplies()
                throw BootstrapError(.unreachable, "the name server dropped the request")
            }
            // Only the server answers (or the process a forwarded request
            // went to): a stray message in the reply port is no answer.
            let sender = reply.sender.pid  // read in place: the trailer is not copied
            if reply.notification != nil
                || link.server.map({ sender != $0.pid && sender != other }) == true {
                continue
            }
            guard reply.id == 0 else {
                throw BootstrapError(.fromWire(reply.id), reply.text.isEmpty ? "refused" : reply.text)
            }
            return reply
        }
    }
}
