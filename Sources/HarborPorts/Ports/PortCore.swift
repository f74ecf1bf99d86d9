// Harbor — a port: its state machine under a lock, and its readiness descriptor.
//
// Lock discipline: `state` guards everything mutable. No callout and no
// blocking call happens under it. The receive side drains the readiness
// eventfd under it (a non-blocking read that must pair with the queue
// becoming empty); the send side writes the eventfd only after unlocking
// (see ReadinessSignal for why, and how exactness is kept). Waking senders,
// delivering notifications, releasing the rights of drained messages and
// closing the descriptor all happen after the lock is dropped, because each
// of those can re-enter another port's lock, or this one's.

import DequeModule
import Synchronization
import HarborSystem

package final class PortCore: Sendable {
    package let name: PortName
    /// The port's name on the wire (PortIdentity.swift).
    package let identity: PortIdentity
    let state: HarborLock<Guarded>
    /// The port's slot in ``LivePorts``, taken once the port is whole.
    private let liveSlot = Atomic<Int>(-1)
    /// Its identity's key in ``PortRegistry``, hashed, when it was made
    /// by an import that registers it (nil: hashed again should it go).
    private let registryKey: PortRegistry.Key?

    struct Guarded: ~Copyable {
        package var machine = PortStateMachine()
        /// Created on first need (a blocking receive, a port set, a run
        /// loop), so a port that is only ever polled costs no descriptor.
        package var readiness: ReadinessSignal?
        /// The descriptor the port shows the world: an epoll set over
        /// `readiness` and, once the port has them, its connections'
        /// sockets. Decided up front, so it never changes after a run loop
        /// registered it, whatever crosses processes later.
        package var readinessSet: Epoll?
        /// `readinessSet`'s number, or -1: readable without borrowing the optional.
        package var readinessFD: CInt = -1
        package weak var set: PortSetCore?
        /// Local, receiving from other processes, or a proxy (PortCore+Location.swift).
        package var location = Location.local {
            didSet {
                slotCounter = transport?.slots.counter
                // Connections made or moved in from now on are set up too (a leaf).
                if readsSenderCgroups { transport?.readSenderCgroups() }
            }
        }
        /// Whether each message from another process carries its sender's
        /// cgroup (``ReceiveRight/readSenderCgroups()``); kept while the
        /// receive right is elsewhere, so it holds again if it comes back.
        package var readsSenderCgroups = false
        /// `transport`'s free-slot counter: a receive frees a slot through
        /// it without retaining and releasing the transport.
        package private(set) var slotCounter: SharedSlots.Counter?
        /// Watches this proxy registered on local ports for its hang-up.
        /// Weak: a watching port that dies takes its transport, and the
        /// watch in its epoll set, with it.
        package var watchers: [ProxyWatch] = []
        /// Watches this proxy holds in the process's `RemoteDeathWatch`.
        package var deathWatches: [UInt64] = []
        /// Whether send rights exported from here share one connection
        /// (``ReceiveRight/shareExportedConnection()``).
        package var sharesExports = false
        /// That connection's sending end, once made; let go when the receive right moves.
        package var sharedExport: SharedDescriptor?
        /// What each uid's messages queued here hold, and the messages
        /// parked off the full queue (Admission/).
        package var ledger = PeerLedger()
        /// The armed taps (Tap/), nil when none: admission's one check.
        package var taps: [PortTapBuffer]?
    }

    package init() {
        name = PortName.next()
        identity = PortIdentity.local(name)
        registryKey = nil
        state = HarborLock(Guarded())
        liveSlot.store(LivePorts.add(self), ordering: .relaxed)
    }

    /// A port that arrived from another process: a proxy for a port
    /// received there, or (`.local`, until its transport is set) a port
    /// whose receive right moved here.
    /// - Parameter registryKey: `identity`'s key, when the import hashed it
    ///   to register the port (kept for the registry's prune as it goes).
    package init(identity: PortIdentity, name: PortName, location: Location, registryKey: PortRegistry.Key? = nil) {
        precondition(registryKey.map { $0.identity == identity } ?? true, "a registry key of another identity")
        self.name = name
        self.identity = identity
        self.registryKey = registryKey
        var guarded = Guarded()
        guarded.location = location
        state = HarborLock(guarded)
        liveSlot.store(LivePorts.add(self), ordering: .relaxed)
    }

    deinit {
        // No longer reported, before anything of it goes (LivePorts reads
        // under its lock). Relaxed: the init that stored it happened before.
        LivePorts.remove(liveSlot.load(ordering: .relaxed))
        // What the ledger charged over the whole process goes with the port;
        // parked messages are dropped outside the lock.
        let (watchers, deathWatches, route, parked) = state.withGuarded {
            ($0.watchers, $0.deathWatches, $0.route, $0.ledger.reset())
        }
        _ = parked
        for watcher in watchers { watcher.transport?.removeWatch(watcher.token) }
        if !deathWatches.isEmpty { route?.cancelDeathWatches(deathWatches) }
        // Forget this port's identity records: a peer inventing identities
        // makes the registry grow only while the rights it sent live.
        PortRegistry.prune(registryKey ?? PortRegistry.Key(identity), leaving: self)
    }

    // MARK: Sending

    /// Queues `content`, waiting for room until `deadline` if the queue is full.
    package func enqueue(_ content: MessageContent, deadline: WaitDeadline) throws(PortError) {
        var parker: Parker?
        while true {
            var signal: ReadinessSignal?
            var remote: (any PortRoute)?
            let outcome = state.withGuarded { guarded -> PortStateMachine.EnqueueOutcome in
                if let route = guarded.route {
                    remote = route
                    return .dead
                }
                let outcome = guarded.enqueueLocally(content)
                switch outcome {
                case .enqueued(let becameReadable):
                    if becameReadable, let readiness = guarded.readiness {
                        readiness.announce()
                        signal = readiness
                    }
                case .full:
                    if case .immediately = deadline { break }
                    let waiter = parker ?? Parker()
                    parker = waiter
                    guarded.machine.senderWillBlock(waiter)
                case .dead:
                    break
                }
                return outcome
            }
            if let remote {
                try remote.send(content, deadline: deadline, to: self)
                return
            }
            switch outcome {
            case .enqueued:
                if let signal { signalAfterUnlock(signal) }
                return
            case .dead:
                throw PortError(.deadName, "send to \(name), whose receive right is gone", returning: content)
            case .full:
                guard let waiter = parker else {
                    throw PortError(.queueFull, "\(name) is at its queue limit", returning: content)
                }
                if waiter.park(until: deadline) { continue }
                // Timed out. If a receiver popped us meanwhile it offered us a
                // slot: take one more look rather than waste it.
                let stillQueued = state.withGuarded { $0.machine.senderStoppedWaiting(waiter) }
                if !stillQueued {
                    parker = nil
                    var signal: ReadinessSignal?
                    let retry = state.withGuarded { guarded -> PortStateMachine.EnqueueOutcome in
                        if guarded.location.isProxy { return .full }
                        let outcome = guarded.enqueueLocally(content)
                        if case .enqueued(true) = outcome, let readiness = guarded.readiness {
                            readiness.announce()
                            signal = readiness
                        }
                        return outcome
                    }
                    if case .enqueued = retry {
                        if let signal { signalAfterUnlock(signal) }
                        return
                    }
                    if case .dead = retry {
                        throw PortError(.deadName, "send to \(name), whose receive right is gone", returning: content)
                    }
                }
                throw PortError(.timedOut, "\(name) stayed at its queue limit", returning: content)
            }
        }
    }

    private func signalAfterUnlock(_ signal: ReadinessSignal) {
        guard signal.signalAfterUnlock() else { return }
        clearSpuriousReadiness()
    }

    /// Makes the readiness descriptor stop polling readable if the queue is
    /// empty: after a wake-up that found nothing, or a late write.
    package func clearSpuriousReadiness() {
        state.withGuarded { guarded in
            if guarded.machine.queue.isEmpty { guarded.readiness?.clearWhileEmpty() }
        }
    }

    /// Queues a runtime notification. Notifications travel like send-once
    /// messages: never blocked, never counted. A dead target drops them.
    package func deliverNotification(_ content: MessageContent) {
        var content = content
        content.countsAgainstLimit = false
        try? enqueue(content, deadline: .immediately)
    }

    // MARK: Receiving

    /// Takes the next message without waiting.
    package func tryDequeue() -> MessageContent? {
        var remote: (any PortConnections)?
        if let content = dequeueQueued(orTransport: &remote) { return content }
        // Only an empty queue looks at the sockets: while messages wait, the
        // readiness descriptor stays readable and we come back.
        guard let transport = remote else { return nil }
        var outcome = transport.pump(into: self, deadline: .immediately, takeFirst: true)
        if let content = outcome.taken.take() ?? dequeueQueued() { return content }
        // Readable with nothing to take (a nudge, or a write that raced a
        // receive): this empty look clears it, or a level-triggered watcher
        // (a run loop, a port set, harbord's loop) wakes again at once.
        if outcome.sawReadiness { clearSpuriousReadiness() }
        return nil
    }

    /// Takes the first queued message. The message is moved, never copied,
    /// on its way out (each copy of a message costs a retain and a release
    /// of every buffer it holds).
    private func dequeueQueued() -> MessageContent? {
        var unused: (any PortConnections)?
        return dequeueQueued(orTransport: &unused)
    }

    /// `dequeueQueued()`, which also hands out the transport when the queue
    /// is empty (one lock where a receive took two).
    private func dequeueQueued(orTransport transportWhenEmpty: inout (any PortConnections)?) -> MessageContent? {
        var freedSlots: (any PortConnections)?
        var wake: Parker?
        var taken: MessageContent?
        state.withGuarded { guarded in
            guard let dequeued = guarded.machine.dequeue(receivingPort: name) else {
                transportWhenEmpty = guarded.transport
                return
            }
            if dequeued.becameEmpty { guarded.readiness?.clearWhileEmpty() }
            taken = guarded.handOut(dequeued, wake: &wake, freed: &freedSlots)
        }
        guard taken != nil else { return nil }
        wake?.unpark()
        freedSlots?.slotFreed(port: self)
        return taken
    }

    /// Takes the next message, waiting until `deadline` for one to arrive.
    package func dequeue(deadline: WaitDeadline) throws(PortError) -> MessageContent {
        while true {
            var remote: (any PortConnections)?
            if let content = dequeueQueued(orTransport: &remote) { return content }
            if let transport = remote {
                // Sleep on the readiness set and read what woke us in one
                // pass: epoll_pwait2 then recvmsg, as a hand-written loop would.
                var outcome = transport.pump(into: self, deadline: deadline, takeFirst: true)
                if let content = outcome.taken.take() ?? dequeueQueued() { return content }
                if outcome.sawReadiness { clearSpuriousReadiness() }
                if !outcome.sawEvents && deadline.hasPassed {
                    // The wait ended empty-handed past the deadline: it timed
                    // out, or a signal cut it short (epoll_pwait2 fails with
                    // EINTR after SIGSTOP and SIGCONT, however long the
                    // process was stopped). A message that reached the
                    // sockets meanwhile is still taken, as `mach_msg` returns
                    // a queued message whatever its timeout (P04).
                    if let content = tryDequeue() { return content }
                    throw PortError(.timedOut, "no message arrived on \(name) in time")
                }
                continue
            }
            if let content = tryDequeue() { return content }
            if case .immediately = deadline {
                throw PortError(.timedOut, "no message waiting on \(name)")
            }
            // A port with no connections from other processes is woken only
            // through its eventfd: wait on that directly, one wake-up level
            // fewer than through the port's epoll set. A connection arriving
            // meanwhile nudges the eventfd, and the next turn takes the
            // transport's path above.
            let fd = try readinessDescriptor()
            // Counted as a sleeper before the last look at the transport, so
            // `ensureTransport` knows to nudge (ReadinessSignal.hasSleepers).
            let signal = state.withGuarded { $0.readiness }
            signal?.sleeperWillWait()
            if state.withGuarded({ $0.transport }) != nil {
                signal?.sleeperWoke()
                continue
            }
            let ready: Bool
            do {
                defer { signal?.sleeperWoke() }
                ready = try waitUntilReadable(signal?.descriptor ?? fd, deadline: deadline)
            } catch {
                throw PortError(error, "waiting for a message on \(name)")
            }
            if !ready && deadline.hasPassed {
                if let content = tryDequeue() { return content }
                throw PortError(.timedOut, "no message arrived on \(name) in time")
            }
            if ready, let content = tryDequeue() { return content }
            if ready { clearSpuriousReadiness() }
        }
    }

    /// The descriptor that polls readable exactly while a message waits,
    /// created on first use. Valid until the port is destroyed.
    package func readinessDescriptor() throws(PortError) -> CInt {
        let result = state.withGuarded { guarded -> Result<CInt, SystemError> in
            if guarded.readinessFD >= 0 { return .success(guarded.readinessFD) }
            do {
                let readiness = try ReadinessSignal()
                let set = try Epoll()
                try set.add(readiness.descriptor, events: .readable, token: portReadinessToken)
                if !guarded.machine.queue.isEmpty { readiness.signalWhileLocked() }
                guarded.readiness = readiness
                guarded.readinessFD = set.rawValue
                guarded.readinessSet = consume set
                return .success(guarded.readinessFD)
            } catch let error as SystemError {
                return .failure(error)
            } catch {
                preconditionFailure("ReadinessSignal.init and Epoll.init throw only SystemError")
            }
        }
        switch result {
        case .success(let fd): return fd
        case .failure(let error): throw PortError(error, "creating the readiness descriptor of \(name)")
        }
    }

    // MARK: Attributes

    package func setQueueLimit(_ limit: Int) throws(PortError) {
        guard (0...PortStateMachine.maximumQueueLimit).contains(limit) else {
            throw PortError(.invalidArgument,
                            "queue limit \(limit) is outside 0...\(PortStateMachine.maximumQueueLimit)")
        }
        let (woken, transport) = state.withGuarded { guarded in
            let old = guarded.machine.queueLimit
            let woken = guarded.machine.setQueueLimit(limit)
            guarded.slotCounter?.release(Int32(limit - old))
            return (woken, guarded.transport)
        }
        for parker in woken { parker.unpark() }
        transport?.slotFreed(port: self)
    }

    package var status: PortStatus {
        state.withGuarded { guarded in
            let machine = guarded.machine
            return PortStatus(
                name: name, queueLimit: machine.queueLimit, queuedMessages: machine.queue.count,
                sendRights: machine.sendRights, sendOnceRights: machine.sendOnceRights,
                madeSendRights: machine.madeSendRights, sequenceNumber: machine.sequenceNumber,
                isDead: machine.isDead, isInSet: guarded.set != nil)
        }
    }

    package var isDead: Bool {
        let (dead, route) = state.withGuarded { ($0.machine.isDead, $0.route) }
        if dead { return true }
        guard let route, route.hasHungUp else { return false }
        remoteDied()
        return true
    }

    // MARK: Port sets

    /// Records membership in `set`; returns the set the port leaves, if any.
    package func join(_ set: PortSetCore?) -> PortSetCore? {
        state.withGuarded { guarded in
            let previous = guarded.set
            guarded.set = set
            return previous
        }
    }

    package var set: PortSetCore? { state.withGuarded { $0.set } }
}

extension PortCore.Guarded {
    /// Takes a dequeued message apart under the lock: frees its slot of the
    /// shared counter (through the counter view, so the transport is kept,
    /// and later retained and released, only when senders in other
    /// processes wait for a slot) and leaves the sender to wake and the
    /// transport to notify for after the lock.
    package func handOut(
        _ dequeued: consuming PortStateMachine.Dequeued, wake: inout Parker?, freed: inout (any PortConnections)?
    ) -> MessageContent {
        // Take the message out first: reading a field through the consumed
        // wrapper made the optimizer retain and release its body around it.
        let counted = dequeued.content.countsAgainstLimit
        wake = dequeued.senderToWake
        let content = (consume dequeued).content
        if counted, let counter = slotCounter {
            counter.release()
            if counter.waiters > 0 { freed = transport }
        }
        return content
    }
}
