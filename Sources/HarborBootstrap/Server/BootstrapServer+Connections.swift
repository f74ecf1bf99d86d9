// Harbor — the name server's connections: accepting, per-uid bootstrap ports, notifications, charges.
import Glibc  // types and constants only: uid_t, EMFILE, ENFILE
import HarborPorts
import HarborRunLoop
import HarborSystem
import HarborTransport

extension BootstrapServer {
    // MARK: Accepting

    func acceptConnections() {
        for _ in 0..<64 {
            let connection: SharedDescriptor
            do {
                guard let accepted = try SeqPacketSocket.accept(on: listener.rawValue) else { break }
                connection = accepted
            } catch where error.code == EMFILE || error.code == ENFILE {
                let (pause, first) = acceptBackoff.failed()
                if first {
                    log(.warning, "accept: \(error); pausing accepts \(milliseconds(pause)) ms, doubling up to "
                        + "\(milliseconds(AcceptBackoff.longest)) ms, until descriptors are free (repeats counted, not logged)")
                }
                pauseAccepting(for: pause)
                break
            } catch {
                log(.warning, "accept: \(error)")
                break
            }
            if let suppressed = acceptBackoff.succeeded() {
                log(.notice, "accepting again after \(suppressed + 1) failure\(suppressed == 0 ? "" : "s") for lack of "
                    + "descriptors (\(suppressed) not logged)")
            }
            welcome(connection)
        }
        reportIfChanged()
    }

    /// Out of descriptors (the reserve is gone: another process's doing, or
    /// a limit set too low): the listener would stay readable and spin the
    /// loop, so stop watching it for `pause` (``AcceptBackoff``).
    private func pauseAccepting(for pause: Duration) {
        guard let loop, !watches.isEmpty else { return }
        watches[0].invalidate()
        loop.perform(after: pause, inModes: [mode]) { [weak self] in
            guard let self, let loop = self.loop, !self.watches.isEmpty else { return }
            if let watch = DescriptorWatch(self.listener.rawValue, loop: loop, mode: self.mode, label: "bootstrap socket", {
                [unowned self] in self.acceptConnections()
            }) {
                self.watches[0] = watch
            }
        }
    }

    private func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }

    /// Sends the new connection its bootstrap right (to its uid's port), or
    /// a refusal with the reason when its uid is at a limit.
    private func welcome(_ connection: SharedDescriptor) {
        guard let uid = SeqPacketSocket.peerUID(connection.rawValue) else {
            log(.debug, "a client left before it was welcomed")
            return
        }
        let user = users[uid]
        var refusal: BootstrapError?
        if let user, user.clients >= quotas.clientsPerUser {
            refusal = BootstrapError(.overQuota, "uid \(uid) holds \(user.clients) connections to the name server, "
                                     + "its limit (\(quotas.clientsPerUser))")
        } else {
            refusal = admit(uid, descriptors: user == nil ? 4 : 1, for: "another connection")
        }
        var message: Message
        if let refusal {
            message = Message(id: refusal.code.rawValue, text: refusal.detail)
            logEvent(.notice, "refused a connection: \(refusal.detail)")
            metrics.connectionRefused(refusal.code)
        } else if let port = userPort(for: uid) {
            message = Message(id: 0, text: "harbor bootstrap")
            message.attach(port.port.makeSendRight())
            metrics.connected()
        } else {
            message = Message(id: BootstrapError.Code.overQuota.rawValue, text: "no bootstrap port could be made for uid \(uid)")
            metrics.connectionRefused(.overQuota)
        }
        do { try FirstMessage.send(message, over: connection, timeout: .zero) } catch {
            log(.debug, "a client left before its bootstrap right was sent: \(error.detail)")
        }
    }

    // MARK: Per-uid bootstrap ports

    /// The bootstrap port of `uid`, made on its first connection.
    func userPort(for uid: uid_t) -> UserPort? {
        if let existing = users[uid] { return existing }
        guard let loop else { return nil }
        let user = UserPort(uid: uid)
        do { try user.port.setQueueLimit(256) } catch {}
        let descriptor: CInt
        do { descriptor = try user.port.withReadinessDescriptor { $0 } } catch {
            log(.warning, "cannot make a bootstrap port for uid \(uid): \(error)")
            return nil
        }
        // The watch is the user port's own, invalidated before the port
        // leaves `users` (userLeft, stop), so its handler never outlives it.
        user.watch = DescriptorWatch(descriptor, loop: loop, mode: mode, label: "bootstrap port of uid \(uid)") {
            [unowned self, unowned user] in
            self.serveRequests(of: user)
        }
        user.port.requestNoSendersNotification(to: notices.makeSendOnceRight())
        users[uid] = user
        userByPort[user.port.name] = uid
        return user
    }

    /// Serves one request of `user`'s uid (with `all`, every one queued), then
    /// lets the loop serve every other ready source: the bootstrap port is
    /// level-triggered, so the next request is served on the next pass. So
    /// each uid with requests waiting gets one answered per pass, whatever
    /// it asks for and however fast: a uid asking for listings as fast as
    /// it can delays another uid's request by one page at most. It also
    /// spares an idle server a look at an empty port after each request.
    func serveRequests(of user: UserPort, all: Bool = false) {
        var changes = false
        repeat {
            guard let message = user.port.tryReceive() else { break }
            let id = message.id & ~BootstrapRequest.registeredReplyBit
            // Look-ups and listings (registered or not) change nothing the summary counts.
            if id != BootstrapRequest.lookUp && id != BootstrapRequest.list { changes = true }
            if metrics.enabled {
                let started = ContinuousClock.now
                handle(message)
                metrics.handled(id, since: started)
            } else {
                handle(message)
            }
        } while all
        if changes { reportIfChanged() }
    }

    /// A uid's last connection closed: its port goes (after the requests
    /// still queued in it are served), with every descriptor it held.
    private func userLeft(_ port: PortName) {
        guard let uid = userByPort[port], let user = users[uid] else { return }
        serveRequests(of: user, all: true)
        guard user.clients == 0 else {
            // Someone connected meanwhile: wait for the next time.
            user.port.requestNoSendersNotification(to: notices.makeSendOnceRight())
            return
        }
        user.watch?.invalidate()
        users[uid] = nil
        userByPort[port] = nil
        log(.debug, "uid \(uid) has no connection left; its bootstrap port is gone")
    }

    // MARK: Notifications

    /// Serves every notification waiting (deaths first: the notices are
    /// served before the bootstrap ports in each pass, ``noticesFirst``).
    func serveNotices() {
        while let message = notices.tryReceive() {
            switch message.notification {
            case .deadName(let port)?:
                sessionDied(port)
                heldPortDied(port)
                replyPortDied(port)
            case .noSenders(let port)?: userLeft(port)
            default: break
            }
        }
        reportIfChanged()
    }

    // MARK: Charges

    /// Descriptors `uid` makes the server hold: its port and connections,
    /// its sessions, the rights to its names' ports, its registered reply
    /// rights, and what its waiting messages carry.
    func descriptorsHeld(by uid: uid_t) -> Int {
        let charge = charges[uid] ?? UserCharges()
        let port = users[uid].map { $0.clients + 3 } ?? 0
        return port + 2 * charge.sessions + 2 * charge.heldRights + 2 * charge.replyRights + charge.pendingDescriptors
    }

    /// Whether `uid` may make the server hold `descriptors` more; the
    /// refusal if not (the share rule of ``DescriptorShares``: root and the
    /// server's own uid may use the reserve).
    func admit(_ uid: uid_t, descriptors: Int, for what: String) -> BootstrapError? {
        let held = descriptorsHeld(by: uid)
        var total = 0
        var unprivilegedTotal = 0
        for other in Set(users.keys).union(charges.keys) {
            let count = descriptorsHeld(by: other)
            total += count
            if !isPrivileged(other) { unprivilegedTotal += count }
        }
        let shares = DescriptorShares(available: budget.available(serverOwn: 5 * watchedWaitingPorts + 2))
        if shares.allows(held: held, more: descriptors, privileged: isPrivileged(uid),
                         unprivilegedTotal: unprivilegedTotal, total: total) { return nil }
        return BootstrapError(.overQuota, "uid \(uid) holds \(held) of the name server's descriptors and may not take "
                              + "\(descriptors) more for \(what) (its share: \(shares.share); "
                              + "\(shares.available - total) free for all uids)")
    }

    /// Root and the server's own uid, which may use the descriptors kept from
    /// the other uids; not the overflow user `nobody` even when the server
    /// runs as it (harbord's fallback user): other services share that uid.
    private func isPrivileged(_ uid: uid_t) -> Bool {
        uid == 0 || (uid == ProcessControl.effectiveUserID && uid != UserAccount.overflowUID)
    }

    func charge(_ uid: uid_t, _ change: (inout UserCharges) -> Void) {
        var charge = charges[uid] ?? UserCharges()
        change(&charge)
        if charge.names == 0 && charge.sessions == 0 && charge.pending == 0 && charge.pendingDescriptors == 0
            && charge.heldRights == 0 && charge.replyRights == 0 {
            charges[uid] = nil
        } else {
            charges[uid] = charge
        }
    }
}
