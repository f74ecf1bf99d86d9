// Harbor — a process's session with the name server: it tells the server when the ports of the names
// the process holds die, and checks them in again when the server restarts.
import HarborPorts
import Synchronization
import HarborSystem

/// The names a process holds, and the thread that speaks for them.
///
/// Each process that checks names in or registers them has a session: a
/// port whose send right rides in those requests beside a send right to the
/// name's port, which the server keeps and answers look-ups with (so a
/// look-up needs nothing from this process, and costs it nothing new).
///
/// The session's thread watches the bootstrap right: when the server goes (a
/// restart on the same socket, under systemd socket activation), it connects
/// again and checks every name in again, by itself; and when one of the
/// process's ports dies it tells the server at once. It also answers the
/// `harbor ports` and `harbor monitor` questions the server forwards
/// (`PortIntrospection`).
///
/// It lasts while the process holds a live name or its `BootstrapClient`
/// lives: dropping the client keeps names checked in; the session ends
/// when the last of them dies too.
///
/// **Cost:** one thread, parked in `receive` (no polling); one port. Per
/// name: a send right to the name's port here, and one in the server (a
/// connection and the port's slot counter, charged to this uid there).
/// **Thread safety:** any thread.
final class BootstrapSession: Sendable {
    /// The session port: look-ups and notifications arrive here.
    let port = ReceiveRight()
    /// The right the server gets (in check-in and register requests).
    let right: SendRight
    let link: BootstrapLink
    let table = HarborLock(Table())
    private let replies = HarborLock(BootstrapReplies())
    private let thread = HarborLock<SystemThread?>(nil)

    /// A name this process holds.
    struct Held: Sendable {
        /// The name's port; nil while its check-in is in flight.
        var right: SendRight?
        /// The server's key for it (`name TAB scope`), for `gone`.
        var key: String
        var registered: Bool
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
        // Without a thread (out of threads) the session reports nothing; the
        // names still work, and go when their ports or this process do.
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

    /// The server agreed: `name` is held through `right`.
    func holds(_ name: String, key: String, right: SendRight) {
        table.withLock { table in
            guard var held = table.names[name] else { return }
            held.right = right
            held.key = key
            table.names[name] = held
        }
        right.requestDeadNameNotification(to: port.makeSendOnceRight())
    }

    /// The server refused, or the name was unregistered.
    func dropped(_ name: String) {
        _ = table.withLock { table in table.names.removeValue(forKey: name) }
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
            if message.id == BootstrapRequest.introspect { answerIntrospection(&message) }
            if message.id == BootstrapRequest.tap { answerTap(&message) }
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
                    return .success(try link.exchange(
                        id, body: Array(name.utf8), carrying: [self.right, right], replies: &replies))
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(var reply):
                let key = reply.text
                table.withLock { table in table.names[name]?.key = key }
                // Relayed, not re-sent: each keeps the sender the server vouched
                // for, and shows the server as its relay (P11).
                if let interim = try? reply.takeReceiveRight(at: 0) {
                    while let waited = interim.tryReceive() { try? right.relay(waited, timeout: .zero) }
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
}
