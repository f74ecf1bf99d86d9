// Harbor — the name server's requests: look up, check in, register, unregister, list, gone.
import Glibc  // types only: uid_t
import HarborPorts

extension BootstrapServer {
    /// Answers one request.
    func handle(_ message: consuming Message) {
        // Only the runtime makes notifications, and none is asked for on a bootstrap port.
        if message.notification != nil { return }
        // P11: the kernel's word on which process delivered the request. A
        // relay's claim (`claimedOriginalSender`) never decides anything here.
        let sender = message.sender
        var id = message.id
        if id == BootstrapRequest.gone {
            gone(&message, from: sender)
            return
        }
        let registered = id & BootstrapRequest.registeredReplyBit != 0 && !message.hasReplyRight
        if registered {
            // A reply right the asker registered (ReplyRegistrations): its
            // own process's only, whatever handle it names.
            guard let handle = BootstrapRequest.handle(endingThe: message.body),
                  let right = replyRegistrations.right(handle, for: sender) else {
                log(.debug, "dropped message \(id) from pid \(sender.pid): it names no reply right registered by it")
                metrics.dropped("unknown_reply_handle")
                return
            }
            id &= ~BootstrapRequest.registeredReplyBit
            message.id = id
            message.body.removeLast(8)
            message.setReplyRight(right)
        }
        guard message.hasReplyRight else {
            log(.debug, "dropped message \(id) without a reply right from \(sender)")
            metrics.dropped("no_reply_right")
            return
        }
        // P11: no answer goes anywhere but back to the asker's own process,
        // so the server cannot be made to speak to another process's port.
        // A registered right passed this check when it was registered, and
        // is used only by the process it leads to (`ReplyRegistrations`).
        guard registered || message.replyRightReceiver?.pid == sender.pid else {
            logEvent(.notice, "dropped request \(id) from pid \(sender.pid) (uid \(sender.uid)): "
                     + "its reply right leads to another process")
            metrics.dropped("reply_right_elsewhere")
            return
        }
        if !registered { keepReplyRight(of: &message) }
        if id == BootstrapRequest.list {
            list(&message, for: sender)
            return
        }
        if id == BootstrapRequest.registerReplies {
            registerReplies(&message, from: sender)
            return
        }
        if handleIntrospection(id, &message, from: sender) { return }
        guard id == BootstrapRequest.lookUp || id == BootstrapRequest.checkIn
                || id == BootstrapRequest.register || id == BootstrapRequest.unregister else {
            refuse(&message, BootstrapError(.badRequest, "unknown request \(id)"))
            return
        }
        guard let name = BootstrapName.decode(message.body) else {
            refuse(&message, BootstrapError(.invalidName, "the request does not name a valid service"))
            return
        }
        switch id {
        case BootstrapRequest.lookUp: lookUp(name, &message, from: sender)
        case BootstrapRequest.checkIn: checkIn(name, &message, from: sender)
        case BootstrapRequest.register: register(name, &message, from: sender)
        default: unregister(name, &message, from: sender)
        }
    }

    // MARK: Requests

    /// A look-up checks no holder's liveness itself (two `poll`s): a death
    /// that happened before the request arrived was already dealt with in
    /// this pass, the notifications being served first (``noticesFirst``).
    private func lookUp(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        guard let entry = entries[NameKey(scope: .user(sender.uid), name: name)]
                ?? entries[NameKey(scope: .shared, name: name)] else {
            log(.debug, "look-up of unknown \(name) by uid \(sender.uid) (pid \(sender.pid))",
                [("name", name), ("uid", String(sender.uid)), ("pid", String(sender.pid))])
            refuse(&request, BootstrapError(.notFound, "no service named \(name) for uid \(sender.uid)"))
            return
        }
        answerLookUp(of: entry, &request, for: sender)
    }

    /// A send right to the name's port: a copy of the one the server holds
    /// (every asker shares its connection), or of a waiting name's.
    func answerLookUp(of entry: NameEntry, _ request: inout Message, for sender: ProcessIdentity) {
        entry.lookUps += 1
        if let answer = entry.answer {
            send(Message(content: answer), replyingTo: &request)
        } else if entry.waiting != nil {
            handOut(entry, &request, to: sender)
        } else {
            refuse(&request, BootstrapError(.notFound, "no service named \(entry.key.name) for uid \(sender.uid)"))
        }
    }

    private func checkIn(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        guard let session = sessionOrRefusal(&request, for: sender) else { return }
        var entry = visibleEntry(name, for: sender.uid)
        if let found = entry, found.key.scope == .shared, found.owner != sender.uid {
            refuse(&request, BootstrapError(.notPermitted, "\(name) is shared and only uid \(found.owner) may check it in"))
            return
        }
        if entry == nil {
            if let refusal = admitName(for: sender.uid) {
                refuse(&request, refusal)
                return
            }
            let key = NameKey(scope: .user(sender.uid), name: name)
            let created = NameEntry(key: key, origin: .checkedIn, owner: sender.uid, unit: nil)
            entries[key] = created
            charge(sender.uid) { $0.names += 1 }
            entry = created
        }
        guard let entry else { return }
        guard let offered = try? request.takeSendRight(at: 1) else {
            refuse(&request, BootstrapError(.badRequest, "a check-in needs a send right to the caller's port as right 1"))
            return
        }
        if entry.origin == .registered {
            refuse(&request, BootstrapError(.nameInUse, "\(name) is registered by pid \(entry.pid ?? 0)"))
            return
        }
        let cursor = BootstrapListing.key(entry.listing).cursor
        if entry.session == session.right.name {
            // Its own session again (it asks once more after a lost reply or a restart).
            send(Message(id: 0, text: cursor), replyingTo: &request)
            return
        }
        if entry.session != nil {
            refuse(&request, BootstrapError(.alreadyActive, "\(name) is checked in by pid \(entry.pid ?? 0)"))
            return
        }
        if let refusal = admit(sender.uid, descriptors: 2, for: "a send right to the name's port") {
            refuse(&request, refusal)
            return
        }
        var answer = Message(id: 0, text: cursor)
        var waited = 0
        var right = offered
        if let waiting = entry.waiting {
            entry.waiting = nil
            if let port = handOver(waiting) {
                waited = port.status.queuedMessages
                answer.attach(port)
                // The server's right to the port it made now reaches the service.
                right = waiting.send
            }
        }
        hold(entry, in: session, pid: sender.pid, right: right)
        entry.unitRequested = true
        send(answer, replyingTo: &request)
        logEvent(.info, "checked in \(name) (\(entry.key.scope), pid \(sender.pid)"
            + (waited > 0 ? ", \(waited) message\(waited == 1 ? "" : "s") waiting)" : ")"), Self.fields(entry.key, sender))
    }

    private func register(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        guard let session = sessionOrRefusal(&request, for: sender) else { return }
        let key = NameKey(scope: .user(sender.uid), name: name)
        if let existing = entries[key], isAlive(existing) {
            if existing.origin == .registered && existing.session == session.right.name {
                send(Message(id: 0, text: BootstrapListing.key(existing.listing).cursor), replyingTo: &request)
                return
            }
            refuse(&request, BootstrapError(.nameInUse, "\(name) is already \(existing.state) in uid \(sender.uid)'s scope"))
            return
        }
        guard let published = try? request.takeSendRight(at: 1), !published.isDead else {
            refuse(&request, BootstrapError(.badRequest, "a registration needs the live send right it publishes as right 1"))
            return
        }
        if let refusal = admitName(for: sender.uid)
            ?? admit(sender.uid, descriptors: 2, for: "a send right to the name's port") {
            refuse(&request, refusal)
            return
        }
        let entry = NameEntry(key: key, origin: .registered, owner: sender.uid, unit: nil)
        entries[key] = entry
        charge(sender.uid) { $0.names += 1 }
        hold(entry, in: session, pid: sender.pid, right: published)
        send(Message(id: 0, text: BootstrapListing.key(entry.listing).cursor), replyingTo: &request)
        logEvent(.info, "registered \(name) (\(key.scope), pid \(sender.pid))", Self.fields(key, sender))
    }

    private func unregister(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        let key = NameKey(scope: .user(sender.uid), name: name)
        guard let entry = entries[key], isAlive(entry) else {
            refuse(&request, BootstrapError(.notFound, "uid \(sender.uid) has no name \(name)"))
            return
        }
        guard entry.origin != .declared else {
            refuse(&request, BootstrapError(.notPermitted, "\(name) is declared by the policy file"))
            return
        }
        remove(entry)
        send(Message(id: 0), replyingTo: &request)
        logEvent(.info, "unregistered \(name) (\(key.scope), pid \(sender.pid))", Self.fields(key, sender))
    }

    /// A session says a name's port is gone. Believed only for a name that
    /// session holds, from a process of the session's uid (the server also
    /// hears it itself, from its own right's dead-name notification).
    /// A notice needs no answer; one that carries a reply right still gets
    /// one (every request with a reply right is answered), but only into the
    /// asker's own process, as every answer.
    private func gone(_ message: inout Message, from sender: ProcessIdentity) {
        let answers = message.hasReplyRight && message.replyRightReceiver?.pid == sender.pid
        let right = try? message.takeSendRight(at: 0)
        guard let right, let session = sessions[right.name], session.uid == sender.uid,
              let key = BootstrapListing.Key(cursor: message.body) else {
            if answers { refuse(&message, BootstrapError(.notFound, "no such name held by that session")) }
            return
        }
        let nameKey = NameKey(scope: key.scope, name: key.name)
        if let entry = entries[nameKey], entry.session == right.name { holderGone(entry) }
        if answers { send(Message(id: 0), replyingTo: &message) }
    }

    // MARK: Sessions

    /// The session whose send right is right 0 of `request`, recorded on its
    /// first use (its port must be received in the sender's own process,
    /// as the kernel says who made its connection).
    /// The caller's session, or nil after refusing `request` with the reason.
    private func sessionOrRefusal(_ request: inout Message, for sender: ProcessIdentity) -> Session? {
        switch sessionOf(&request, for: sender) {
        case .success(let found): return found
        case .failure(let error):
            refuse(&request, error)
            return nil
        }
    }

    private func sessionOf(_ request: inout Message, for sender: ProcessIdentity) -> Result<Session, BootstrapError> {
        guard let right = try? request.takeSendRight(at: 0) else {
            return .failure(BootstrapError(.badRequest, "the request needs the caller's session right as right 0"))
        }
        if let known = sessions[right.name] {
            guard known.uid == sender.uid else {
                return .failure(BootstrapError(.notPermitted, "that session belongs to uid \(known.uid)"))
            }
            return .success(known)
        }
        guard !right.isDead, right.receivingProcess?.pid == sender.pid, !isServerPort(right.name) else {
            return .failure(BootstrapError(.badRequest, "right 0 is not a session right of the caller's own process"))
        }
        let count = charges[sender.uid]?.sessions ?? 0
        if count >= quotas.sessionsPerUser {
            return .failure(BootstrapError(.overQuota, "uid \(sender.uid) has \(count) sessions, its limit"))
        }
        if let refusal = admit(sender.uid, descriptors: 2, for: "a session") { return .failure(refusal) }
        let session = Session(right: right, uid: sender.uid, pid: sender.pid)
        sessions[right.name] = session
        charge(sender.uid) { $0.sessions += 1 }
        right.requestDeadNameNotification(to: notices.makeSendOnceRight())
        return .success(session)
    }

    // MARK: Registered reply rights

    /// Keeps the request's reply right (a send right, leading back to the
    /// asker: checked in ``handle(_:)``) and answers with its handle; the
    /// port's handle again if it is registered already.
    private func registerReplies(_ request: inout Message, from sender: ProcessIdentity) {
        guard case .send(let right)? = request.takeReplyRight() else {
            // Only a send-once right is left to answer through.
            refuse(&request, BootstrapError(.badRequest, "only a send right can be registered as a reply right"))
            return
        }
        request.setReplyRight(right)
        if let known = replyRegistrations.handle(of: right) {
            send(Message(id: 0, body: BootstrapRequest.handleBytes(known)), replyingTo: &request)
            return
        }
        let count = charges[sender.uid]?.replyRights ?? 0
        if count >= quotas.clientsPerUser {
            refuse(&request, BootstrapError(.overQuota, "uid \(sender.uid) has \(count) registered reply rights, its limit"))
            return
        }
        if let refusal = admit(sender.uid, descriptors: 2, for: "a registered reply right") {
            refuse(&request, refusal)
            return
        }
        let handle = replyRegistrations.register(right, for: sender)
        charge(sender.uid) { $0.replyRights += 1 }
        right.requestDeadNameNotification(to: notices.makeSendOnceRight())
        send(Message(id: 0, body: BootstrapRequest.handleBytes(handle)), replyingTo: &request)
    }

    /// A registered reply right's port died: the registration goes, and its charge.
    func replyPortDied(_ port: PortName) {
        guard let uid = replyRegistrations.remove(port: port) else { return }
        charge(uid) { $0.replyRights -= 1 }
    }

    private func admitName(for uid: uid_t) -> BootstrapError? {
        let count = charges[uid]?.names ?? 0
        guard count >= quotas.namesPerUser else { return nil }
        return BootstrapError(.overQuota, "uid \(uid) has \(count) names, its limit")
    }

    // MARK: Replies

    /// Keeps a copy of `request`'s reply right if it is a send right
    /// (``recentReplyRight``); the request keeps it too.
    private func keepReplyRight(of request: inout Message) {
        guard let reply = request.takeReplyRight() else { return }
        switch consume reply {
        case .send(let right):
            if recentReplyRight != right { recentReplyRight = right }
            request.setReplyRight(right)
        case .sendOnce(let right):
            request.setReplyRight(right)
        }
    }

    func send(_ answer: consuming Message, replyingTo request: inout Message) {
        do { try request.reply(answer, timeout: .zero) } catch {
            log(.debug, "reply to pid \(request.sender.pid) failed: \(error.detail)")
        }
    }

    func refuse(_ request: inout Message, _ error: BootstrapError) {
        metrics.refused(request.id, error.code)
        send(Message(id: error.code.rawValue, text: error.detail), replyingTo: &request)
    }
}
