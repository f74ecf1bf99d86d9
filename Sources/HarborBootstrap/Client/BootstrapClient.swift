// Harbor — a process's connection to the name server: look up, check in, register, list.
import HarborPorts
import Synchronization

/// A connection to the bootstrap name server (`harbord`).
///
/// Connecting to the server's socket yields this process's first right, a
/// send right to the bootstrap port (the server sends it down the fresh
/// connection, which is then closed). Every request is a message to that
/// port carrying a send-once reply right; the server learns the caller's
/// uid from the kernel's credentials on the message, never from its bytes.
///
/// ```swift
/// let bootstrap = try BootstrapClient()                 // finds the socket itself
/// let inbox = try bootstrap.checkIn("com.example.echo")  // the service side
/// let echo = try bootstrap.lookUp("com.example.echo")    // any client
/// ```
///
/// **Cost:** connecting is one `connect` and one packet. Each request is a
/// round trip through the server: two packets and one socket pair (the
/// reply right's connection).
/// **Thread safety:** any thread; requests from several threads are served
/// one at a time (one reply port, under a lock).
/// **Darwin equivalent:** `bootstrap_look_up`, `bootstrap_check_in`,
/// `bootstrap_register` on `bootstrap_port`.
public final class BootstrapClient: Sendable {
    /// The send right to the bootstrap port this connection got.
    public let bootstrapPort: SendRight
    /// How long each request waits for its reply.
    public let timeout: Duration
    /// The socket it connected to.
    public let socketPath: String
    /// The reply port, replaced after a timeout so a late reply cannot
    /// answer the next request.
    private let replies: Mutex<ReceiveRight>

    /// Connects to the name server at `socketPath` (default:
    /// ``BootstrapAddress/clientPath``) and takes its bootstrap right.
    /// - Throws: ``BootstrapError/Code/unreachable`` if nothing answers there.
    public init(socketPath: String? = nil, timeout: Duration = .seconds(5)) throws(BootstrapError) {
        let path = socketPath ?? BootstrapAddress.clientPath
        self.socketPath = path
        self.timeout = timeout
        let connection: SharedDescriptor
        do { connection = try UnixSocket.connect(to: path) } catch {
            throw BootstrapError(.unreachable, "cannot connect to \(path): \(error)")
        }
        var welcome: Message
        do { welcome = try FirstMessage.receive(over: connection, timeout: timeout) } catch {
            throw BootstrapError(.unreachable, "\(path) did not hand out a bootstrap right: \(error.detail)", underlying: error)
        }
        do { bootstrapPort = try welcome.takeSendRight(at: 0) } catch {
            throw BootstrapError(.badReply, "the welcome message carries no send right", underlying: error)
        }
        replies = Mutex(ReceiveRight())
    }

    /// Uses an existing send right to a bootstrap port (one passed in a
    /// message, or an in-process server's).
    public init(bootstrapPort: SendRight, timeout: Duration = .seconds(5)) {
        self.bootstrapPort = bootstrapPort
        self.timeout = timeout
        self.socketPath = ""
        replies = Mutex(ReceiveRight())
    }

    /// A send right to the service registered or checked in as `name`, in
    /// the caller's own scope or among shared names. A declared name whose
    /// service has not checked in yet is found too: messages wait for it
    /// (and the server asks systemd to start its unit).
    /// - Throws: ``BootstrapError/Code/notFound``, ``BootstrapError/Code/invalidName``, transport errors.
    public func lookUp(_ name: String) throws(BootstrapError) -> SendRight {
        var reply = try request(BootstrapRequest.lookUp, name: name)
        do { return try reply.takeSendRight(at: 0) } catch {
            throw BootstrapError(.badReply, "look-up reply without a send right", underlying: error)
        }
    }

    /// Claims `name` and returns its receive right, with every message sent
    /// to it so far. A name not declared is declared now in the caller's
    /// scope, and removed when the receive right dies; a declared name goes
    /// back to the server when its holder dies, and waits for the next check-in.
    /// - Throws: ``BootstrapError/Code/alreadyActive`` if a live process holds it,
    ///   ``BootstrapError/Code/notPermitted`` for a shared name another uid owns,
    ///   ``BootstrapError/Code/nameInUse`` if it is registered.
    public func checkIn(_ name: String) throws(BootstrapError) -> ReceiveRight {
        var reply = try request(BootstrapRequest.checkIn, name: name)
        do { return try reply.takeReceiveRight(at: 0) } catch {
            throw BootstrapError(.badReply, "check-in reply without a receive right", underlying: error)
        }
    }

    /// Publishes `right` as `name` in the caller's scope, until the port dies
    /// or ``unregister(_:)``.
    /// - Throws: ``BootstrapError/Code/nameInUse`` if the name is taken in that scope.
    public func register(_ name: String, _ right: SendRight) throws(BootstrapError) {
        _ = try request(BootstrapRequest.register, name: name, carrying: right)
    }

    /// Removes a name the caller registered or checked in without declaration.
    /// - Throws: ``BootstrapError/Code/notFound``, ``BootstrapError/Code/notPermitted`` (declared names stay).
    public func unregister(_ name: String) throws(BootstrapError) {
        _ = try request(BootstrapRequest.unregister, name: name)
    }

    /// Every name the caller can see: its own scope and the shared names.
    public func list() throws(BootstrapError) -> [BootstrapEntry] {
        let reply = try request(BootstrapRequest.list, name: nil)
        guard let entries = BootstrapEntry.decode(reply.text) else {
            throw BootstrapError(.badReply, "the listing did not decode")
        }
        return entries
    }

    private func request(_ id: Int32, name: String?, carrying right: SendRight? = nil) throws(BootstrapError) -> Message {
        if let name, !BootstrapName.isValid(name) {
            throw BootstrapError(.invalidName, "\(name.debugDescription) is not a valid service name "
                                 + "(1–\(BootstrapName.maximumLength) of A–Z a–z 0–9 . _ - : @)")
        }
        let timeout = self.timeout
        let bootstrapPort = self.bootstrapPort
        let outcome = replies.withLock { replies -> Result<Message, BootstrapError> in
            var message = Message(id: id, text: name ?? "")
            if let right { message.attach(right) }
            let reply = replies.makeSendOnceRight()
            message.setReplyRight(reply)
            do throws(PortError) { try bootstrapPort.send(message, timeout: timeout) } catch {
                return .failure(BootstrapError(.unreachable, "the name server is gone: \(error.detail)", underlying: error))
            }
            do throws(PortError) {
                return .success(try replies.receive(timeout: timeout))
            } catch {
                replies = ReceiveRight()
                if error.code == .timedOut {
                    return .failure(BootstrapError(.timedOut, "no reply within \(timeout)", underlying: error))
                }
                return .failure(BootstrapError(.unreachable, "receiving the reply: \(error.detail)", underlying: error))
            }
        }
        let reply = try outcome.get()
        // A dead server's send-once connection closes unused: a send-once notification.
        if reply.notification != nil {
            throw BootstrapError(.unreachable, "the name server dropped the request")
        }
        guard reply.id == 0 else {
            throw BootstrapError(.fromWire(reply.id), reply.text.isEmpty ? "refused" : reply.text)
        }
        return reply
    }
}
