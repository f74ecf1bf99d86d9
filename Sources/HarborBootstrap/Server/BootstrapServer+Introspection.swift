// Harbor — the name server's introspection: `harbor ports` and `harbor monitor` forwarded to a process's
// session, `harbor print`, `harbor list --all` (Docs/harbord.md, "Looking inside").
import Glibc  // types only: pid_t, uid_t
import HarborPorts
import HarborSystem

extension BootstrapServer {
    /// Answers an introspection request; false if `message` is not one.
    func handleIntrospection(_ id: Int32, _ message: inout Message, from sender: ProcessIdentity) -> Bool {
        switch id {
        case BootstrapRequest.ports: forwardPorts(&message, from: sender)
        case BootstrapRequest.sessions: listSessions(&message, for: sender)
        case BootstrapRequest.print: printName(&message, for: sender)
        case BootstrapRequest.listAll: listAll(&message, for: sender)
        case BootstrapRequest.monitor: forwardMonitor(&message, from: sender)
        default: return false
        }
        return true
    }

    /// Seconds since the Unix epoch, for a name's check-in time.
    static func wallClockSeconds() -> Int { WallClock.secondsSinceEpoch }

    // MARK: harbor ports

    /// `harbor ports PID`: allowed to root and to the uid the kernel reported
    /// for the process's session; the question goes to the session with the
    /// asker's reply right, and the process answers the asker itself. The
    /// server forwards and forgets: a stopped process leaves the asker
    /// waiting (until its timeout), never the server. The question waits in
    /// the session's queue (its own, limited): a full queue refuses.
    private func forwardPorts(_ request: inout Message, from sender: ProcessIdentity) {
        guard let pid = pid_t(String(decoding: request.body, as: UTF8.self)), pid > 0 else {
            refuse(&request, BootstrapError(.badRequest, "the request does not name a pid"))
            return
        }
        guard let session = liveSessions(where: { $0.pid == pid }).first else {
            refuse(&request, BootstrapError(.notFound, "no session with the name server (it holds no name)"))
            return
        }
        guard sender.uid == 0 || sender.uid == session.uid else {
            refuse(&request, BootstrapError(.notPermitted, "runs as uid \(session.uid); only that uid and root may look"))
            return
        }
        guard let reply = request.takeReplyRight() else { return }
        var question = Message(id: BootstrapRequest.introspect)
        var copy: SendRight?
        switch consume reply {
        case .send(let right):
            copy = right
            question.setReplyRight(right)
        case .sendOnce(let right):
            question.setReplyRight(right)
        }
        do throws(PortError) { try session.right.send(question, timeout: .zero) } catch {
            log(.debug, "could not ask pid \(pid) for its ports: \(error.detail)")
            let refusal = BootstrapError(.busy, "cannot take the question now: \(error.detail)")
            try? copy?.send(Message(id: refusal.code.rawValue, text: refusal.detail), timeout: .zero)
        }
    }

    /// The sessions `include` picks that are still alive (a dead one found
    /// on the way is dealt with), by pid. Only the picked ones are checked
    /// and sorted: a request costs the server work for the asker's own
    /// sessions (root's: all), not for every uid's.
    private func liveSessions(where include: (Session) -> Bool) -> [Session] {
        let picked = sessions.filter { include($0.value) }
        for (port, session) in picked where session.right.isDead { sessionDied(port) }
        return picked.values.filter { !$0.right.isDead }.sorted { $0.pid < $1.pid }
    }

    /// `harbor ports --all`: the processes the asker may look into.
    private func listSessions(_ request: inout Message, for sender: ProcessIdentity) {
        let rows = liveSessions(where: { sender.uid == 0 || $0.uid == sender.uid }).prefix(BootstrapSessionList.maximumRows)
            .map { BootstrapSessionList.Row(pid: $0.pid, uid: $0.uid, names: $0.names.count) }
        send(Message(id: 0, text: BootstrapSessionList(rows: Array(rows)).encoded), replyingTo: &request)
    }

    // MARK: harbor print

    /// `harbor print NAME`: a name the asker can see (its own, a shared one;
    /// root: any uid's, named as `NAME TAB UID`).
    private func printName(_ request: inout Message, for sender: ProcessIdentity) {
        let entry: NameEntry
        do { entry = try namedEntry(request.body, for: sender) } catch {
            refuse(&request, error)
            return
        }
        var report = NameReport(name: entry.key.name, scope: entry.key.scope, state: entry.state, origin: {
            switch entry.origin {
            case .declared: "declared"
            case .checkedIn: "checked-in"
            case .registered: "registered"
            }
        }())
        report.pid = entry.session == nil ? nil : entry.pid
        report.unit = entry.unit
        report.lookUps = entry.lookUps
        report.checkIns = entry.checkIns
        report.since = entry.session == nil ? nil : entry.since
        if let waiting = entry.waiting {
            report.queued = waiting.pending.count + (waiting.port?.status.queuedMessages ?? 0)
            report.waitingByUID = waiting.pendingByUser.filter { $0.value > 0 }
        }
        send(Message(id: 0, text: report.encoded), replyingTo: &request)
    }

    /// The live entry a `print` or `monitor` request names: a name the
    /// asker can see (its own, a shared one), or `NAME TAB SCOPE` (root:
    /// any uid's).
    private func namedEntry(_ body: [UInt8], for sender: ProcessIdentity) throws(BootstrapError) -> NameEntry {
        let entry: NameEntry?
        if let name = BootstrapName.decode(body) {
            entry = visibleEntry(name, for: sender.uid)
        } else if let key = BootstrapListing.Key(cursor: body) {
            let visible = sender.uid == 0 || key.scope == .shared || key.scope == .user(sender.uid)
            let found = visible ? entries[NameKey(scope: key.scope, name: key.name)] : nil
            entry = found.flatMap { isAlive($0) ? $0 : nil }
        } else {
            throw BootstrapError(.invalidName, "the request does not name a valid service")
        }
        guard let entry else { throw BootstrapError(.notFound, "no such service for uid \(sender.uid)") }
        return entry
    }

    // MARK: harbor monitor

    /// `harbor monitor NAME` and `harbor capture NAME`: allowed to root and
    /// to the uid the kernel reported for the session of the process holding
    /// the name. The question goes to that session with the monitor's send
    /// right and the asker's reply right, and the holder answers the asker
    /// itself; forwarded and forgotten, as `ports` is. A question the
    /// session's queue has no room for is refused `busy`.
    private func forwardMonitor(_ request: inout Message, from sender: ProcessIdentity) {
        let text = String(decoding: request.body, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let prefix = Int(parts[1]), prefix >= 0,
              request.carriedRights == [.send], let monitor = try? request.takeSendRight(at: 0) else {
            refuse(&request, BootstrapError(.badRequest, "a monitor request is NAME newline BODY-PREFIX, with one send right"))
            return
        }
        // As a reply right (P11): the records go back to the asker's own
        // process, never to another's port in the holder's name.
        guard monitor.receivingProcess?.pid == sender.pid else {
            refuse(&request, BootstrapError(.badRequest, "the monitor's port must be in the asking process"))
            return
        }
        let entry: NameEntry
        do { entry = try namedEntry(Array(parts[0].utf8), for: sender) } catch {
            refuse(&request, error)
            return
        }
        guard let sessionName = entry.session, let session = sessions[sessionName], !session.right.isDead else {
            refuse(&request, BootstrapError(.notFound, "\(entry.key.name) is not held by a running process"))
            return
        }
        guard sender.uid == 0 || sender.uid == session.uid else {
            refuse(&request, BootstrapError(.notPermitted, "\(entry.key.name) is held by uid \(session.uid); "
                                            + "only that uid and root may monitor it"))
            return
        }
        guard let reply = request.takeReplyRight() else { return }
        var question = Message(id: BootstrapRequest.tap, text: "\(entry.key.name)\t\(prefix)")
        question.attach(monitor)
        switch consume reply {
        case .send(let right): question.setReplyRight(right)
        case .sendOnce(let right): question.setReplyRight(right)
        }
        do throws(PortError) { try session.right.send(question, timeout: .zero) } catch {
            log(.debug, "could not ask pid \(session.pid) to tap \(entry.key.name): \(error.detail)")
            guard var undelivered = error.takeUndeliveredMessage() else { return }
            let refusal = BootstrapError(.busy, "pid \(session.pid) cannot take the question now: \(error.detail)")
            try? undelivered.reply(Message(id: refusal.code.rawValue, text: refusal.detail), timeout: .zero)
        }
    }

    // MARK: harbor list --all

    /// Every uid's names, a page at a time (root only). O(n log n) a page:
    /// an operator's request, not a service's.
    private func listAll(_ request: inout Message, for sender: ProcessIdentity) {
        guard sender.uid == 0 else {
            refuse(&request, BootstrapError(.notPermitted, "only root may list every uid's names"))
            return
        }
        var cursor: BootstrapListing.Key?
        if !request.body.isEmpty {
            guard let parsed = BootstrapListing.Key(cursor: request.body) else {
                refuse(&request, BootstrapError(.badRequest, "the listing cursor is malformed"))
                return
            }
            cursor = parsed
        }
        let live = Array(entries.values).filter { isAlive($0) }.map(\.listing)
        let sorted = live.sorted { BootstrapListing.key($0) < BootstrapListing.key($1) }
        send(Message(id: 0, text: BootstrapListing.page(sorted, after: cursor)), replyingTo: &request)
    }
}
