// Harbor — the name server's names: who holds them, deaths, and the ports of names waiting for their service.
import Glibc  // types only: pid_t, uid_t
import HarborPorts

extension BootstrapServer {
    // MARK: Finding names

    /// The caller's own name, else a shared one; dead holders are dealt with first.
    func visibleEntry(_ name: String, for uid: uid_t) -> NameEntry? {
        if let entry = entries[NameKey(scope: .user(uid), name: name)], isAlive(entry) { return entry }
        if let entry = entries[NameKey(scope: .shared, name: name)], isAlive(entry) { return entry }
        return nil
    }

    /// Whether the entry still stands after checking its holder's session (a
    /// session that died but whose notification is still queued is dealt
    /// with now, so a request after a death never sees the dead session).
    func isAlive(_ entry: NameEntry) -> Bool {
        if let name = entry.session, let session = sessions[name], session.right.isDead { sessionDied(name) }
        if entries[entry.key] === entry, let right = entry.right, right.isDead { holderGone(entry) }
        return entries[entry.key] === entry
    }

    /// ``isAlive(_:)``, skipping the check of a session or port already
    /// found alive in `seenAlive` (within one request: a listing page of
    /// one process's names checks its session and port once).
    func isAlive(_ entry: NameEntry, seenAlive: inout Set<PortName>) -> Bool {
        if let name = entry.session, !seenAlive.contains(name), let session = sessions[name] {
            if session.right.isDead { sessionDied(name) } else { seenAlive.insert(name) }
        }
        if entries[entry.key] === entry, let right = entry.right, !seenAlive.contains(right.name) {
            if right.isDead { holderGone(entry) } else { seenAlive.insert(right.name) }
        }
        return entries[entry.key] === entry
    }

    /// Whether the server holds the receive right of `port` (a request may
    /// not pass one of those off as its session).
    func isServerPort(_ port: PortName) -> Bool {
        if port == notices.name || userByPort[port] != nil { return true }
        return entries.values.contains { $0.waiting?.send.name == port }
    }

    // MARK: Holders

    /// `entry` is held by `session`'s process, its port reached through
    /// `right` (charged to the owner's uid; its death is the holder's).
    func hold(_ entry: NameEntry, in session: Session, pid: pid_t, right: SendRight) {
        entry.session = session.right.name
        entry.pid = pid
        (entry.checkIns, entry.since) = (entry.checkIns + 1, Self.wallClockSeconds())
        entry.right = right
        // One proxy per port, whatever number of names reach it: charged once per owner.
        if !holdsPort(right.name, for: entry.owner) {
            charge(entry.owner) { $0.heldRights += 1 }
            right.requestDeadNameNotification(to: notices.makeSendOnceRight())
        }
        if heldPorts[right.name, default: []].insert(entry.key).inserted {
            heldPortOwners[right.name, default: [:]][entry.owner, default: 0] += 1
        }
        session.names.insert(entry.key)
        session.pid = pid
    }

    /// Lets go of the server's right to `entry`'s port.
    private func releaseRight(of entry: NameEntry) {
        guard let right = entry.right else { return }
        entry.right = nil
        if heldPorts[right.name]?.remove(entry.key) != nil {
            let left = (heldPortOwners[right.name]?[entry.owner] ?? 1) - 1
            heldPortOwners[right.name]?[entry.owner] = left > 0 ? left : nil
            if heldPortOwners[right.name]?.isEmpty == true { heldPortOwners[right.name] = nil }
        }
        if heldPorts[right.name]?.isEmpty == true { heldPorts[right.name] = nil }
        if !holdsPort(right.name, for: entry.owner) { charge(entry.owner) { $0.heldRights -= 1 } }
    }

    /// Whether a name of `owner`'s reaches `port` through the server's right.
    /// **Cost:** two hash look-ups, whatever number of names reach the port.
    private func holdsPort(_ port: PortName, for owner: uid_t) -> Bool {
        heldPortOwners[port]?[owner] != nil
    }

    /// The port behind the server's right died: every name it held goes.
    func heldPortDied(_ port: PortName) {
        guard let keys = heldPorts[port] else { return }
        for key in keys {
            if let entry = entries[key], entry.right?.name == port { holderGone(entry) }
        }
    }

    /// A session ended (its process exited, or dropped its `BootstrapClient`
    /// with no name left): every name it held goes.
    func sessionDied(_ port: PortName) {
        guard let session = sessions.removeValue(forKey: port) else { return }
        charge(session.uid) { $0.sessions -= 1 }
        for key in session.names {
            if let entry = entries[key], entry.session == port { holderGone(entry) }
        }
        reportIfChanged()
    }

    /// The holder of `entry` is gone: a declared name waits again in a new
    /// port, others are removed.
    func holderGone(_ entry: NameEntry) {
        if let port = entry.session { sessions[port]?.names.remove(entry.key) }
        entry.session = nil
        releaseRight(of: entry)
        let who = entry.pid.map { "pid \($0)" } ?? "its holder"
        var fields = Self.fields(entry.key)
        if let pid = entry.pid { fields += [("uid", String(entry.owner)), ("pid", String(pid))] }
        switch entry.origin {
        case .declared:
            entry.waiting = WaitingPort()
            entry.pid = nil
            entry.unitRequested = false
            logEvent(.notice, "\(entry.key.name) (\(entry.key.scope)): \(who) is gone; the name waits for the next check-in", fields)
        case .checkedIn, .registered:
            entries[entry.key] = nil
            charge(entry.owner) { $0.names -= 1 }
            logEvent(.info, "\(entry.key.name) (\(entry.key.scope)): \(who) is gone; name removed", fields)
        }
    }

    /// `unregister`: the name goes (its holder keeps its port).
    func remove(_ entry: NameEntry) {
        if let port = entry.session { sessions[port]?.names.remove(entry.key) }
        entry.session = nil
        releaseRight(of: entry)
        entries[entry.key] = nil
        if entry.isCounted { charge(entry.owner) { $0.names -= 1 } }
    }

    // MARK: Waiting names

    /// Answers a look-up of a waiting name with a send right to its port
    /// (every one shares one connection, the server's own: a look-up costs
    /// the server nothing new), and starts taking its messages out as they
    /// come, each charged to its sender's uid.
    func handOut(_ entry: NameEntry, _ request: inout Message, to sender: ProcessIdentity) {
        guard let waiting = entry.waiting else { return }
        if let unit = entry.unit, !entry.unitRequested {
            entry.unitRequested = true
            activate(unit, for: entry.key.name)
        }
        watch(entry, waiting)
        var answer = Message(id: 0)
        answer.attach(waiting.send)
        send(answer, replyingTo: &request)
    }

    private func watch(_ entry: NameEntry, _ waiting: WaitingPort) {
        guard waiting.watch == nil, let loop else { return }
        let descriptor: CInt
        do { descriptor = try waiting.port?.withReadinessDescriptor { $0 } ?? -1 } catch {
            log(.warning, "\(entry.key.name): no readiness descriptor: \(error)")
            return
        }
        guard descriptor >= 0 else { return }
        let key = entry.key
        waiting.watch = DescriptorWatch(descriptor, loop: loop, mode: mode, label: "waiting name \(key.name)") { [unowned self] in
            self.takeWaitingMessages(of: key)
        }
        if waiting.watch != nil { watchedWaitingPorts += 1 }
    }

    /// Takes the messages that arrived for a waiting name out of its port,
    /// each charged to the uid the kernel says sent it; one over its uid's
    /// limits (its share of this name's queue, its waiting messages in all)
    /// is refused: its reply right, if any, gets ``BootstrapError/Code/overQuota``;
    /// one without a reply right is dropped, and its sender cannot be told.
    private func takeWaitingMessages(of key: NameKey) {
        guard let entry = entries[key], let waiting = entry.waiting else { return }
        for _ in 0..<64 {
            guard var message = waiting.port?.tryReceive() else { break }
            let uid = message.trailer.sender.uid
            // What its rights really hold here: a receive right, its port's
            // readiness pair, slot counter and every connection it brought.
            let descriptors = message.heldDescriptors
            let held = charges[uid]?.pending ?? 0
            let heldHere = waiting.pendingByUser[uid] ?? 0
            var refusal: BootstrapError?
            if waiting.pending.count >= BootstrapQuotas.pendingPerName {
                refusal = BootstrapError(.overQuota, "\(key.name) already has \(waiting.pending.count) messages waiting")
            } else if heldHere >= BootstrapQuotas.pendingPerNamePerUser {
                refusal = BootstrapError(.overQuota, "uid \(uid) has \(heldHere) messages waiting for \(key.name), "
                                         + "its share of the name's queue")
            } else if held >= quotas.pendingPerUser {
                refusal = BootstrapError(.overQuota, "uid \(uid) has \(held) messages waiting for services, its limit")
            } else {
                refusal = admit(uid, descriptors: descriptors, for: "a waiting message's rights")
            }
            if let refusal {
                logEvent(.notice, "refused a message for \(key.name) from pid \(message.trailer.sender.pid) (uid \(uid)): "
                         + refusal.detail + (message.hasReplyRight ? "" : "; it had no reply right and is dropped"),
                         Self.fields(key, message.trailer.sender))
                if message.hasReplyRight { refuse(&message, refusal) }
                continue
            }
            waiting.pending.append(PendingMessage(message, uid: uid, descriptors: descriptors))
            waiting.pendingByUser[uid, default: 0] += 1
            charge(uid) {
                $0.pending += 1
                $0.pendingDescriptors += descriptors
            }
        }
    }

    /// Check-in of a waiting name: its port, with every message that waited
    /// put back in order, or nil when nobody ever had a right to it (the
    /// service's own port is the name's then).
    func handOver(_ waiting: WaitingPort) -> ReceiveRight? {
        if let watch = waiting.watch {
            watch.invalidate()
            waiting.watch = nil
            watchedWaitingPorts -= 1
        }
        var pending = waiting.pending
        waiting.pending = []
        for item in pending {
            charge(item.uid) {
                $0.pending -= 1
                $0.pendingDescriptors -= item.descriptors
            }
        }
        guard let port = waiting.port.take() else { return nil }
        // What arrived since the last pass goes after what waited before it.
        while pending.count < BootstrapQuotas.pendingPerName, let late = port.tryReceive() {
            let uid = late.trailer.sender.uid
            pending.append(PendingMessage(late, uid: uid, descriptors: 0))
        }
        guard !pending.isEmpty || port.status.sendRights > 1 || port.status.queuedMessages > 0 else { return nil }
        // A relay is a local send, admitted by the port's own count (not by
        // its shared slot counter, which senders in other processes write:
        // HarborPorts' PortCore+Admission.swift), so a limit that holds the
        // messages that waited takes every one of them.
        let limit = min(BootstrapQuotas.pendingPerName, max(5, pending.count))
        do { try port.setQueueLimit(limit) } catch {}
        for item in pending {
            guard let message = item.message.take() else { continue }
            // Relayed, not re-sent: each keeps its own sender, which the
            // encoding of the moving port passes on as this server's word.
            do { try waiting.send.relay(message, timeout: .zero) } catch {
                log(.warning, "a message waiting for its service was lost at check-in: \(error.detail) "
                    + "(\(port.status.queuedMessages) queued, limit \(limit))")
            }
        }
        return port
    }

    // MARK: Activation

    func activate(_ unit: String, for name: String) {
        guard let loop else { return }
        let logLine = self.logLine
        let fields = [("name", name), ("unit", unit)]
        let started = starter.start(unit, loop: loop, mode: mode) { succeeded, outcome in
            logLine(succeeded ? .info : .warning, "activating \(unit) for \(name): \(outcome)", fields)
        }
        if !started {
            log(.notice, "\(name) is not checked in; its unit \(unit) was not started (no systemd here)", fields)
        }
    }
}
