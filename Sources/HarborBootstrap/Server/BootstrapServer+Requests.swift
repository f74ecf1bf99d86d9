// Harbor — the name server's requests: look up, check in, register, unregister, list; and deaths.
import Glibc
import HarborPorts

extension BootstrapServer {
    func handle(_ message: consuming Message) {
        if let notification = message.notification {
            if case .deadName(let port) = notification { portDied(port) }
            return
        }
        guard message.hasReplyRight else {
            log(.debug, "dropped message \(message.id) without a reply right from \(message.trailer.sender)")
            return
        }
        let sender = message.trailer.sender
        let id = message.id
        if id == BootstrapRequest.list {
            reply(&message, .success(listing(for: sender.uid)))
            return
        }
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

    private func lookUp(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        guard let entry = visibleEntry(name, for: sender.uid) else {
            log(.debug, "look-up of unknown \(name) by uid \(sender.uid) (pid \(sender.pid))")
            refuse(&request, BootstrapError(.notFound, "no service named \(name) for uid \(sender.uid)"))
            return
        }
        if entry.held != nil, let unit = entry.unit, !entry.unitRequested {
            entry.unitRequested = true
            activate(unit, for: name)
        }
        var answer = Message(id: 0)
        answer.attach(entry.send)
        send(answer, replyingTo: &request)
    }

    private func checkIn(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        var entry = visibleEntry(name, for: sender.uid)
        if let found = entry, found.key.scope == .shared, found.owner != sender.uid {
            refuse(&request, BootstrapError(.notPermitted, "\(name) is shared and only uid \(found.owner) may check it in"))
            return
        }
        if entry == nil {
            let key = NameKey(scope: .user(sender.uid), name: name)
            let created = NameEntry(key: key, origin: .checkedIn, owner: sender.uid, unit: nil)
            entries[key] = created
            entry = created
        }
        guard let entry else { return }
        if entry.origin == .registered {
            refuse(&request, BootstrapError(.nameInUse, "\(name) is registered by pid \(entry.pid ?? 0)"))
            return
        }
        guard let port = entry.held.take() else {
            refuse(&request, BootstrapError(.alreadyActive, "\(name) is checked in by pid \(entry.pid ?? 0)"))
            return
        }
        let queued = port.status.queuedMessages
        var answer = Message(id: 0)
        answer.attach(port)
        entry.pid = sender.pid
        entry.unitRequested = true
        send(answer, replyingTo: &request)
        watchForDeath(entry)
        log(.info, "checked in \(name) (\(entry.key.scope), pid \(sender.pid)"
            + (queued > 0 ? ", \(queued) message\(queued == 1 ? "" : "s") waiting)" : ")"))
    }

    private func register(_ name: String, _ request: inout Message, from sender: ProcessIdentity) {
        let right: SendRight
        do { right = try request.takeSendRight(at: 0) } catch {
            refuse(&request, BootstrapError(.badRequest, "register needs a send right as right 0"))
            return
        }
        let key = NameKey(scope: .user(sender.uid), name: name)
        if let existing = entries[key], isAlive(existing) {
            refuse(&request, BootstrapError(.nameInUse, "\(name) is already \(existing.state) in uid \(sender.uid)'s scope"))
            return
        }
        let entry = NameEntry(key: key, registering: right, owner: sender.uid, pid: sender.pid)
        entries[key] = entry
        send(Message(id: 0), replyingTo: &request)
        watchForDeath(entry)
        log(.info, "registered \(name) (\(key.scope), pid \(sender.pid))")
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
        log(.info, "unregistered \(name) (\(key.scope), pid \(sender.pid))")
    }

    private func listing(for uid: uid_t) -> String {
        let visible = entries.values.filter { entry in
            (entry.key.scope == .shared || entry.key.scope == .user(uid)) && isAlive(entry)
        }
        return BootstrapEntry.encode(visible.map(\.listing).sorted { ($0.name, "\($0.scope)") < ($1.name, "\($1.scope)") })
    }

    // MARK: Names and deaths

    /// The caller's own name, else a shared one; dead holders are dealt with first.
    private func visibleEntry(_ name: String, for uid: uid_t) -> NameEntry? {
        for scope in [BootstrapEntry.Scope.user(uid), .shared] {
            if let entry = entries[NameKey(scope: scope, name: name)], isAlive(entry) { return entry }
        }
        return nil
    }

    /// Whether the entry still stands after checking its holder (a holder
    /// that died but whose notification is still queued is handled now, so
    /// a request after a death never sees the dead port).
    private func isAlive(_ entry: NameEntry) -> Bool {
        if entry.held == nil && entry.send.isDead { holderDied(entry) }
        return entries[entry.key] === entry
    }

    private func watchForDeath(_ entry: NameEntry) {
        byPort[entry.send.name] = entry.key
        entry.send.requestDeadNameNotification(to: bootstrap.makeSendOnceRight())
    }

    private func portDied(_ port: PortName) {
        guard let key = byPort[port], let entry = entries[key], entry.held == nil, entry.send.name == port else { return }
        holderDied(entry)
        reportIfChanged()
    }

    private func holderDied(_ entry: NameEntry) {
        byPort[entry.send.name] = nil
        let who = entry.pid.map { "pid \($0)" } ?? "its holder"
        switch entry.origin {
        case .declared:
            entry.recreate()
            log(.notice, "\(entry.key.name) (\(entry.key.scope)): \(who) is gone; the name waits for the next check-in")
        case .checkedIn, .registered:
            entries[entry.key] = nil
            log(.info, "\(entry.key.name) (\(entry.key.scope)): \(who) is gone; name removed")
        }
    }

    private func remove(_ entry: NameEntry) {
        byPort[entry.send.name] = nil
        entries[entry.key] = nil
    }

    private func activate(_ unit: String, for name: String) {
        guard let loop else { return }
        let log = self.log
        let started = starter.start(unit, loop: loop, mode: mode) { succeeded, outcome in
            log(succeeded ? .info : .warning, "activating \(unit) for \(name): \(outcome)")
        }
        if !started {
            log(.notice, "\(name) is not checked in; its unit \(unit) was not started (no systemd here)")
        }
    }

    // MARK: Replies

    private func send(_ answer: consuming Message, replyingTo request: inout Message) {
        do { try request.reply(answer, timeout: .zero) } catch {
            log(.debug, "reply to pid \(request.trailer.sender.pid) failed: \(error.detail)")
        }
    }

    private func refuse(_ request: inout Message, _ error: BootstrapError) {
        send(Message(id: error.code.rawValue, text: error.detail), replyingTo: &request)
    }

    private func reply(_ request: inout Message, _ result: Result<String, BootstrapError>) {
        switch result {
        case .success(let text): send(Message(id: 0, text: text), replyingTo: &request)
        case .failure(let error): refuse(&request, error)
        }
    }
}
