// Harbor — a process's session with the name server: it answers look-ups of the names the process holds,
// tells the server when their ports die, and checks them in again when the server restarts.
import HarborPorts
import Synchronization

/// The names a process holds, and the thread that speaks for them.
///
/// The server keeps no right to a service's port (that would cost it
/// descriptors for every name). Instead each process that checks names in
/// or registers them has a session: a port whose send right rides in those
/// requests. The server forwards look-ups of the process's names to it, and
/// its thread answers each with a send right to the name's port.
///
/// The thread also watches the bootstrap right: when the server goes (a
/// restart on the same socket, under systemd socket activation), it connects
/// again and checks every name in again, by itself, and when one of the
/// process's ports dies it tells the server at once.
///
/// It lasts while the process holds a live name or its `BootstrapClient`
/// lives: dropping the client keeps names checked in; the session ends
/// when the last of them dies too.
///
/// **Cost:** one thread, parked in `receive` (no polling); one port. Per
/// name: nothing in the server; here, a send right to the name's port.
/// **Thread safety:** any thread.
final class BootstrapSession: Sendable {
    /// The session port: look-ups and notifications arrive here.
    let port = ReceiveRight()
    /// The right the server gets (in check-in and register requests).
    let right: SendRight
    let link: BootstrapLink
    private let table = HarborLock(Table())
    private let replies = HarborLock(ReceiveRight())
    private let thread = HarborLock<SystemThread?>(nil)

    /// A name this process holds.
    struct Held: Sendable {
        /// The name's port; nil while its check-in is in flight.
        var right: SendRight?
        /// The server's key for it (`name TAB scope`), for `gone`.
        var key: String
        var registered: Bool
        /// Look-ups that came before the check-in's reply did.
        var parked: [ParkedLookUp] = []
    }

    struct Table: Sendable {
        var names: [String: Held] = [:]
        var clientGone = false
    }

    /// The message that wakes the thread to look at `clientGone`.
    private static let wakeID: Int32 = 0x4842_01FF

    init(link: BootstrapLink) {
        self.link = link
        right = port.makeSendRight()
        do { try port.setQueueLimit(256) } catch {}
        // Without a thread (out of threads) the session answers nothing; the
        // names still work for this process, as before the session existed.
        Self.threads.add(1, ordering: .sequentiallyConsistent)
        let owned = Unmanaged.passRetained(self)
        if let handle = try? SystemThread.spawn({ Self.serve(owned) }) {
            thread.withLock { $0 = handle }
        } else {
            owned.release()
            Self.threads.subtract(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Session threads not yet done: counted from before one starts until it
    /// has let go of its session.
    private static let threads = Atomic<Int>(0)

    /// The thread's body. It drops its reference before counting itself out:
    /// when that reference was the last (the client gone, the last name
    /// dead), the session's ports are closed by then.
    private static func serve(_ owned: Unmanaged<BootstrapSession>) {
        var session: BootstrapSession? = owned.takeRetainedValue()
        session?.run()
        session = nil
        threads.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Waits until no session thread runs (or `timeout` passes); true if none does.
    static func waitUntilQuiescent(timeout: Duration) -> Bool {
        pollUntil(timeout: timeout, every: .microseconds(200)) { threads.load(ordering: .sequentiallyConsistent) == 0 }
    }

    // MARK: The table (any thread)

    /// A check-in or registration is about to be asked for; false if the name is already held here.
    func willHold(_ name: String, registered: Bool) -> Bool {
        table.withLock { table in
            if let held = table.names[name], held.right.map({ !$0.isDead }) ?? true { return false }
            table.names[name] = Held(right: nil, key: name, registered: registered)
            return true
        }
    }

    /// The server agreed: `name` is held through `right`. Look-ups that came early are answered now.
    func holds(_ name: String, key: String, right: SendRight) {
        let parked = table.withLock { table -> [ParkedLookUp] in
            guard var held = table.names[name] else { return [] }
            held.right = right
            held.key = key
            let parked = held.parked
            held.parked = []
            table.names[name] = held
            return parked
        }
        right.requestDeadNameNotification(to: port.makeSendOnceRight())
        for lookUp in parked {
            if var message = lookUp.message.take() { answer(&message) }
        }
    }

    /// The server refused, or the name was unregistered.
    func dropped(_ name: String) {
        let parked = table.withLock { table -> [ParkedLookUp] in
            table.names.removeValue(forKey: name)?.parked ?? []
        }
        for lookUp in parked {
            if var message = lookUp.message.take() { passBack(&message) }
        }
    }

    /// The client that made the session is gone. With no live name left the
    /// session ends now (and this waits for its thread); otherwise it ends
    /// with the last name.
    func clientLeft() {
        let idle = table.withLock { table -> Bool in
            table.clientGone = true
            return !Self.hasLiveNames(table)
        }
        do { try port.makeSendOnceRight().send(Message(id: Self.wakeID)) } catch {}
        guard idle, let handle = thread.withLock({ $0.take() }) else { return }
        if handle.isCurrent {
            handle.detach()
        } else {
            handle.join()
        }
    }

    private static func hasLiveNames(_ table: Table) -> Bool {
        table.names.values.contains { held in held.right.map { !$0.isDead } ?? true }
    }

    // MARK: The thread

    private func run() {
        var watched = link.current
        watched.right.requestDeadNameNotification(to: port.makeSendOnceRight())
        var retryAt: ContinuousClock.Instant?
        var backoff = Duration.milliseconds(20)
        while true {
            var message: Message
            do throws(PortError) {
                message = try port.receive(timeout: retryAt.map { max(.zero, ContinuousClock.now.duration(to: $0)) })
            } catch {
                guard error.code == .timedOut else { break }
                if shouldEnd() { break }
                if reconnect(&watched) {
                    retryAt = nil
                    backoff = .milliseconds(20)
                } else {
                    backoff = min(backoff * 2, .seconds(1))
                    retryAt = .now + backoff
                }
                continue
            }
            if let notification = message.notification {
                if case .deadName(let name) = notification {
                    if name == watched.right.name {
                        // The server is gone: connect again now, and keep trying.
                        backoff = .milliseconds(20)
                        retryAt = reconnect(&watched) ? nil : .now + backoff
                    } else {
                        portDied(name)
                    }
                }
            } else if message.id == BootstrapSessionRequest.lookUp {
                if message.trailer.sender.pid == link.current.serverPID { answer(&message) }
            }
            if shouldEnd() { break }
        }
        thread.withLock { handle in
            if let mine = handle, mine.isCurrent {
                mine.detach()
                handle = nil
            }
        }
    }

    private func shouldEnd() -> Bool {
        table.withLock { $0.clientGone && !Self.hasLiveNames($0) }
    }

    /// Connects again (unless the client already did) and checks every live
    /// name in again. False if the server cannot be reached yet.
    private func reconnect(_ watched: inout BootstrapLink.Current) -> Bool {
        guard !link.socketPath.isEmpty else { return true }  // nothing to connect to again
        do { watched = try link.reconnect(after: watched.generation, timeout: .seconds(2)) } catch { return false }
        watched.right.requestDeadNameNotification(to: port.makeSendOnceRight())
        return checkInAgain()
    }

    /// After a restart: every name this process still holds, checked in (or
    /// registered) with the new server. A declared name's new port may
    /// already hold messages sent after the restart: they are passed on to
    /// the port the process holds, and that new port is dropped.
    private func checkInAgain() -> Bool {
        let held = table.withLock { table in table.names.filter { $0.value.right.map { !$0.isDead } ?? false } }
        for (name, entry) in held {
            guard let right = entry.right else { continue }
            let id = entry.registered ? BootstrapRequest.register : BootstrapRequest.checkIn
            let outcome = replies.withLock { replies -> Result<Message, BootstrapError> in
                do throws(BootstrapError) {
                    return .success(try link.exchange(id, body: Array(name.utf8), carrying: self.right, replies: &replies))
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(var reply):
                let key = reply.text
                table.withLock { table in table.names[name]?.key = key }
                if let interim = try? reply.takeReceiveRight(at: 0) {
                    while let waited = interim.tryReceive() { try? right.send(waited, timeout: .zero) }
                }
            case .failure(let error):
                // Not reached yet: try again later. Refused: the name is someone else's now.
                if error.code == .unreachable || error.code == .timedOut { return false }
                table.withLock { table in _ = table.names.removeValue(forKey: name) }
            }
        }
        return true
    }

    /// A port this process held a name for died: the server hears it now.
    private func portDied(_ name: PortName) {
        let keys = table.withLock { table -> [String] in
            var keys: [String] = []
            for (text, held) in table.names where held.right?.name == name && held.right?.isDead == true {
                keys.append(held.key)
                table.names[text] = nil
            }
            return keys
        }
        for key in keys {
            var notice = Message(id: BootstrapRequest.gone, text: key)
            notice.attach(right)
            try? link.current.right.send(notice, timeout: .zero)
        }
    }

    /// A forwarded look-up: a send right to the name's port, or, if that port
    /// died, the look-up goes back to the server to answer.
    private func answer(_ message: inout Message) {
        guard let key = BootstrapListing.Key(cursor: message.body) else { return }
        enum Found { case right(SendRight), parked, none }
        // Parking must happen under the lock `holds` drains it under.
        let box = ParkedLookUp(message.takeForParking())
        let found = table.withLock { table -> Found in
            guard var held = table.names[key.name] else { return .none }
            guard let right = held.right else {
                held.parked.append(box)
                table.names[key.name] = held
                return .parked
            }
            if right.isDead {
                table.names[key.name] = nil
                return .none
            }
            return .right(right)
        }
        guard case .parked = found else {
            guard var taken = box.message.take() else { return }
            if case .right(let right) = found {
                var answer = Message(id: 0)
                answer.attach(right)
                try? taken.reply(answer, timeout: .zero)
            } else {
                passBack(&taken)
            }
            return
        }
    }

    /// Hands a look-up this session cannot answer back to the server as `gone`.
    private func passBack(_ message: inout Message) {
        guard let reply = message.takeReplyRight() else { return }
        var back = Message(id: BootstrapRequest.gone, body: message.body)
        back.attach(right)
        switch consume reply {
        case .send(let right): back.setReplyRight(right)
        case .sendOnce(let right): back.setReplyRight(right)
        }
        try? link.current.right.send(back, timeout: .zero)
    }
}

/// A forwarded look-up kept until its name's check-in completes.
final class ParkedLookUp: @unchecked Sendable {
    // @unchecked: created and emptied under the session table's lock only.
    var message: Message?
    init(_ message: consuming Message) { self.message = .some(message) }
}

extension Message {
    /// Moves this message out, leaving an empty one (for a ~Copyable value in an inout slot).
    fileprivate mutating func takeForParking() -> Message {
        var taken = Message(id: 0)
        swap(&self, &taken)
        return taken
    }
}
