// Harbor — a message: an id, bytes, rights, a reply right and a trailer.
import HarborSystem

/// A message to send to a port, or one received from it.
///
/// `~Copyable` because it may carry rights: a message, like the receive and
/// send-once rights inside it, has one owner at a time. Dropping a message
/// releases every right it still carries.
///
/// ```swift
/// var request = Message(id: 7, body: Array("ping".utf8))
/// request.setReplyRight(replyPort.makeSendOnceRight())
/// try server.send(request)
/// ```
///
/// **Mach equivalent:** `mach_msg_header_t` with a complex body.
public struct Message: ~Copyable, Sendable {
    /// The most bytes an inline body may hold. Larger payloads are for
    /// out-of-line memory.
    public static let maximumBodySize = 64 * 1024
    /// The most rights one message may carry, the reply right not counted
    /// (kept under the kernel's 253 descriptors per `SCM_RIGHTS`).
    public static let maximumCarriedRights = 64

    package var content: MessageContent

    /// Creates a message with an id and an inline body.
    public init(id: Int32, body: [UInt8] = []) {
        content = MessageContent(id: id, body: body)
    }

    /// Creates a message whose body is the UTF-8 bytes of `text`.
    public init(id: Int32, text: String) {
        self.init(id: id, body: Array(text.utf8))
    }

    package init(content: consuming MessageContent) { self.content = content }

    /// The message's storage, moved out (reading `content` would copy it:
    /// a retain and a release of each of its buffers).
    package consuming func takeContent() -> MessageContent { content }

    /// The message id, for the receiver to dispatch on (Mach: `msgh_id`).
    public var id: Int32 {
        get { content.id }
        set { content.id = newValue }
    }

    /// The inline bytes.
    public var body: [UInt8] {
        get { content.body }
        set { content.body = newValue }
    }

    /// The body decoded as UTF-8 (invalid bytes become U+FFFD).
    public var text: String { String(decoding: content.body, as: UTF8.self) }

    /// What the runtime says about the message once received; zeroes before.
    public var trailer: MessageTrailer { content.trailer }

    /// ``trailer``'s sender, read without copying the whole trailer.
    package var sender: ProcessIdentity { content.sender }

    // MARK: Carried rights

    /// Attaches a send right (Mach's copy-send, or move-send if you drop yours).
    public mutating func attach(_ right: SendRight) {
        content.attach(.send(right.token))
    }

    /// Moves a send-once right into the message (Mach's move-send-once).
    public mutating func attach(_ right: consuming SendOnceRight) {
        content.attach(.sendOnce(right.token))
    }

    /// Moves a receive right into the message (Mach's move-receive). The
    /// port lives on, queue and all, and belongs to whoever takes it out.
    public mutating func attach(_ right: consuming ReceiveRight) {
        content.attach(.receive(right.token))
    }

    /// The kinds of the carried rights, in the order attached.
    public var carriedRights: [CarriedRightKind] { content.rights.map(\.kind) }

    /// Takes the send right at `index` out of the message.
    /// - Throws: ``PortError/Code/invalidRight`` if there is no send right there.
    public mutating func takeSendRight(at index: Int) throws(PortError) -> SendRight {
        guard case .send(let token) = try take(at: index, expecting: .send) else { preconditionFailure() }
        return SendRight(token: token)
    }

    /// Takes the send-once right at `index` out of the message.
    /// - Throws: ``PortError/Code/invalidRight`` if there is no send-once right there.
    public mutating func takeSendOnceRight(at index: Int) throws(PortError) -> SendOnceRight {
        guard case .sendOnce(let token) = try take(at: index, expecting: .sendOnce) else { preconditionFailure() }
        return SendOnceRight(token: token)
    }

    /// Takes the receive right at `index` out of the message.
    /// - Throws: ``PortError/Code/invalidRight`` if there is no receive right there.
    public mutating func takeReceiveRight(at index: Int) throws(PortError) -> ReceiveRight {
        guard case .receive(let token) = try take(at: index, expecting: .receive) else { preconditionFailure() }
        return ReceiveRight(token: token)
    }

    private mutating func take(at index: Int, expecting kind: CarriedRightKind) throws(PortError) -> CarriedRight {
        guard content.rights.indices.contains(index) else {
            throw PortError(.invalidRight, "no carried right at index \(index) (the message has \(content.rights.count))")
        }
        let right = content.rights[index]
        guard right.kind == kind else {
            throw PortError(.invalidRight, "carried right \(index) is \(right.kind), not \(kind)")
        }
        content.rights[index] = .taken
        return right
    }

    // MARK: Reply right

    /// Sets the right the receiver should answer through (Mach: `msgh_remote_port`).
    public mutating func setReplyRight(_ right: consuming SendOnceRight) {
        content.reply = .sendOnce(right.token)
    }

    /// Sets a send right as the reply right, for a receiver that may answer more than once.
    public mutating func setReplyRight(_ right: SendRight) {
        content.reply = .send(right.token)
    }

    /// Whether the message still carries a reply right.
    public var hasReplyRight: Bool {
        switch content.reply {
        case .send, .sendOnce, .receive: true
        case .taken, nil: false
        }
    }

    /// Sends `reply` through this message's reply right, using a send-once
    /// reply right up.
    /// - Throws: ``PortError/Code/invalidRight`` if there is no reply right,
    ///   or whatever the send throws.
    public mutating func reply(_ reply: consuming Message, timeout: Duration? = nil) throws(PortError) {
        switch content.reply {
        case .send(let token):
            try SendRight(token: token).send(reply, timeout: timeout)
        case .sendOnce(let token):
            content.reply = .taken
            try SendOnceRight(token: token).send(reply)
        case .receive, .taken, nil:
            throw PortError(.invalidRight, "message \(content.id) carries no reply right",
                            returning: reply.content)
        }
    }

    /// The descriptors this process holds for the message: each carried
    /// right's (a received port's eventfd, epoll set, slot counter and
    /// connections; a proxy's connection and slot counter), the reply
    /// right's, one per out-of-line region and one per carried file. What a server that keeps the
    /// message charges its sender for (P12).
    package var heldDescriptors: Int {
        func held(_ right: CarriedRight?) -> Int {
            switch right {
            case .send(let token): token.port.heldDescriptors
            case .sendOnce(let token): token.port.heldDescriptors
            case .receive(let token): token.port.heldDescriptors
            case .taken, nil: 0
            }
        }
        return content.rights.reduce(0) { $0 + held($1) } + held(content.reply) + content.regions.count
            + content.carriedFileCount
    }

    /// The process the reply right leads to, as the kernel vouches
    /// (``SendRight/receivingProcess``); nil without a reply right. A server
    /// that answers only when this is the asker (`trailer.sender`) cannot be
    /// made to answer into another process's port (P11).
    package var replyRightReceiver: ProcessIdentity? {
        switch content.reply {
        case .send(let token): token.port.receivingProcess
        case .sendOnce(let token): token.port.receivingProcess
        case .receive, .taken, nil: nil
        }
    }

    /// Takes the reply right out, to answer later or elsewhere.
    public mutating func takeReplyRight() -> ReplyRight? {
        defer { if content.reply != nil { content.reply = .taken } }
        switch content.reply {
        case .send(let token): return .send(SendRight(token: token))
        case .sendOnce(let token): return .sendOnce(SendOnceRight(token: token))
        case .receive, .taken, nil: return nil
        }
    }
}

/// A reply right taken out of a message: a send right or a send-once right.
public enum ReplyRight: ~Copyable, Sendable {
    case send(SendRight)
    case sendOnce(SendOnceRight)

    /// Sends `message` through the right (a send-once right is used up).
    public consuming func send(_ message: consuming Message, timeout: Duration? = nil) throws(PortError) {
        switch consume self {
        case .send(let right): try right.send(message, timeout: timeout)
        case .sendOnce(let right): try right.send(message)
        }
    }
}

extension MessageContent {
    /// Checks the limits and stamps the sender, just before queueing.
    package mutating func prepareForSending() throws(PortError) {
        if body.count > Message.maximumBodySize {
            throw PortError(.messageTooLarge,
                            "body of \(body.count) bytes is over the \(Message.maximumBodySize)-byte limit",
                            returning: self)
        }
        if rights.count > Message.maximumCarriedRights {
            throw PortError(.messageTooLarge,
                            "\(rights.count) carried rights is over the limit of \(Message.maximumCarriedRights)",
                            returning: self)
        }
        if files.count > Message.maximumCarriedFiles {
            throw PortError(.messageTooLarge,
                            "\(files.count) carried files is over the limit of \(Message.maximumCarriedFiles)",
                            returning: self)
        }
        stampSender()
    }

    /// ``prepareForSending()`` for a message this process passes on as it
    /// received it: the limits are checked, and the trailer the runtime
    /// filled in when it arrived here (its sender, relay and claim) is
    /// kept, but for ``MessageTrailer/isNotification``, which only the
    /// runtime's own messages carry.
    package mutating func prepareForRelaying() throws(PortError) {
        let trailer = self.trailer
        try prepareForSending()
        var kept = MessageTrailer(sender: trailer.sender)
        kept.relayedBy = trailer.relayedBy
        kept.claimedOriginalSender = trailer.claimedOriginalSender
        kept.senderCgroup = trailer.senderCgroup
        self.trailer = kept
    }
}
