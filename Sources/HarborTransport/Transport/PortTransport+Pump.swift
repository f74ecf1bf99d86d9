// Harbor — a port's transport, receiving: pumping its connections into the queue.
//
// Whoever receives pumps (a blocking receive, a run-loop pass, tryDequeue):
// no thread reads the sockets. Lock order as in PortTransport.swift: the
// pump buffers before the table, never after.
import DequeModule
import Synchronization
import HarborSystem
import HarborPorts

extension PortTransport {

    /// Reads what the ready sockets hold and queues it on `port`.
    ///
    /// With `deadline` other than `.immediately`, first sleeps in
    /// `epoll_pwait2` on the port's readiness set (outside the locks, so
    /// other receivers and `tryReceive` are never held up): one system call
    /// where waiting on the set and then polling it took two. With
    /// `takeFirst`, the first message goes straight to the caller when the
    /// queue is empty, so the readiness eventfd is neither written nor
    /// drained for it (two system calls fewer per message); and the last
    /// connection is read before sleeping, as a receive that does not wait
    /// reads it (`readLastConnection`): a reply that came while this thread
    /// was off its CPU (its request woke the answerer on the same CPU) is
    /// taken without asking the set.
    @discardableResult
    package func pump(
        into port: PortCore, deadline: WaitDeadline = .immediately, takeFirst: Bool = false
    ) -> PumpOutcome {
        if case .immediately = deadline {
            return pumpBuffers.withBuffers { buffers in
                var collected = Collected(takeFirst: takeFirst)
                if takeFirst && readLastConnection(buffers: &buffers, into: &collected) { return collected }
                let count = EpollControl.poll(epollFD, into: buffers.events)
                process(UnsafeMutableBufferPointer(rebasing: buffers.events[0..<count]), buffers: &buffers,
                        into: &collected)
                return collected
            }.finish(self, port)
        }
        if takeFirst, let collected = pumpBuffers.withBuffers({ buffers -> Collected? in
            var collected = Collected(takeFirst: true)
            guard readLastConnection(buffers: &buffers, into: &collected) else { return nil }
            return .some(consume collected)
        }) {
            return collected.finish(self, port)
        }
        // Events land on the stack (the pump lock is not held while asleep)
        // and are processed from there.
        return withUnsafeTemporaryAllocation(of: EpollEvent.self, capacity: 32) { stack in
            let count = Self.wait(epollFD, stack, deadline: deadline)
            // Passed by address: this thread's own stack, read only inside
            // the lock below, on this thread, before the allocation ends.
            let address = UInt(bitPattern: stack.baseAddress)
            return pumpBuffers.withBuffers { buffers in
                let base = UnsafeMutablePointer<EpollEvent>(bitPattern: address)
                var collected = Collected(takeFirst: takeFirst)
                process(UnsafeMutableBufferPointer(start: base, count: count), buffers: &buffers, into: &collected)
                return collected
            }
        }.finish(self, port)
    }

    /// Sleeps until the set has events or `deadline` passes; 0 when a
    /// signal or an error cut the wait short (the caller looks again).
    private static func wait(_ epollFD: CInt, _ events: UnsafeMutableBufferPointer<EpollEvent>,
                             deadline: WaitDeadline) -> Int {
        (try? EpollControl.wait(epollFD, into: events, timeout: deadline.remaining())) ?? 0
    }

    /// Work collected under the pump lock, done after it is released.
    fileprivate struct Collected: ~Copyable, Sendable {
        /// The messages read and the connections that ended behind them,
        /// for the port's admission (HarborPorts' `PortCore.admit`).
        var arrivals: PortArrivals
        /// Proxies whose connection hung up (watched for a dead-name
        /// request), told after the messages (nil: none, no array to release).
        var hungUp: [PortCore]?
        var gotWaiter = false
        /// A refused packet gave its slot back: senders waiting may go on.
        var gaveSlotsBack = false
        var sawEvents = false
        var sawReadiness = false

        /// Whether the receiver takes the first message (a read-ahead may follow it).
        let takeFirst: Bool

        init(takeFirst: Bool) {
            self.takeFirst = takeFirst
            arrivals = PortArrivals(takeFirst: takeFirst)
        }

        mutating func append(message content: consuming MessageContent, from token: UInt64) {
            arrivals.append(message: content, from: token, reserving: PumpBuffers.readAheadLimit)
        }

        consuming func finish(_ transport: PortTransport, _ port: PortCore) -> PumpOutcome {
            var outcome = PumpOutcome()
            outcome.sawEvents = sawEvents
            outcome.sawReadiness = sawReadiness
            let hungUp = self.hungUp
            var gaveSlotsBack = self.gaveSlotsBack
            let gotWaiter = self.gotWaiter
            if !arrivals.isEmpty {
                var admission = port.admit(arrivals, from: transport)
                outcome.taken = admission.taken.take()
                if admission.refusals.count > 0 { WireRejections.record(admission.refusals) }
                if admission.gaveSlotsBack { gaveSlotsBack = true }
                // Only now: the slot the first message freed pumps the sockets
                // again, and what that reads must come after this batch.
                if admission.freedSlot { transport.slotFreed(port: port) }
            }
            if gotWaiter || (gaveSlotsBack && transport.counter.waiters > 0) { transport.signalWaiters(port: port) }
            for proxy in hungUp ?? [] { proxy.remoteDied() }
            return outcome
        }
    }

    /// A receive that takes the first message (one that does not wait, or
    /// one about to sleep) reads the connection the last message came from
    /// first and, when a message or its end was there, is done without
    /// asking the port's set (one `epoll_wait` fewer). It does so when that
    /// is what the set would name:
    /// - on a port with one connection and no hang-up watch (a reply port,
    ///   a service with one client, a port set's member the set just found
    ///   ready), always;
    /// - on any other port, when the set, asked last, named that connection
    ///   alone, and for at most ``PumpBuffers/guessLimit`` pumps in a row
    ///   before the set is asked again (a name server's port with one
    ///   client busy). Such a read takes one message, without reading
    ///   ahead, so a connection that became readable meanwhile waits that
    ///   many messages at most, and then one read-ahead's worth, as when
    ///   every pump asks the set; once the set names two, every pump asks
    ///   it, and it serves each ready connection in turn.
    ///
    /// A read that finds nothing costs a `recvmsg` and then the set is asked
    /// as before; each such miss doubles the number of pumps that ask the
    /// set first (up to 63), as the read-ahead does. Returns whether
    /// something arrived.
    private func readLastConnection(buffers: inout PumpBuffers, into collected: inout Collected) -> Bool {
        if buffers.directSkip > 0 {
            buffers.directSkip -= 1
            return false
        }
        // The last connection read, still there (no departure since) and
        // what the set named alone, or the only one.
        guard let cached = buffers.cachedConnection,
              cached.departures == departures.load(ordering: .acquiring) else { return false }
        let sole = table.withLockedValue { $0.connections.count == 1 && $0.watches.isEmpty }
        let guessing = !sole && buffers.namedAlone == cached.token && buffers.guesses < PumpBuffers.guessLimit
        guard sole || guessing else { return false }
        serve(cached.token, readingAhead: sole, buffers: &buffers, into: &collected)
        guard collected.arrivals.isEmpty else {
            buffers.directMisses = 0
            if guessing { buffers.guesses += 1 }
            collected.sawEvents = true
            return true
        }
        buffers.directMisses = min(buffers.directMisses + 1, 6)
        buffers.directSkip = (1 << buffers.directMisses) - 1
        return false
    }

    private func process(
        _ events: UnsafeMutableBufferPointer<EpollEvent>, buffers: inout PumpBuffers, into collected: inout Collected
    ) {
        if !events.isEmpty { collected.sawEvents = true }
        // What the set named, for the reads that guess it (`readLastConnection`).
        buffers.guesses = 0
        buffers.namedAlone = events.count == 1 && events[0].token & Self.connectionTag != 0 ? events[0].token : nil
        for event in events {
            let token = event.token
            if token == Self.readinessToken {
                collected.sawReadiness = true
                continue
            }
            if token & Self.watchTag != 0 {
                guard let watch = table.withLockedValue({ $0.watches.removeValue(forKey: token) }) else { continue }
                EpollControl.remove(epollFD, watch.route.socket.rawValue)
                if let proxy = watch.proxy { collected.hungUp = (collected.hungUp ?? []) + [proxy] }
                continue
            }
            serve(token, buffers: &buffers, into: &collected)
        }
    }

    /// Reads what the connection behind `token` holds: a message (and, when
    /// the receiver takes the first and `readingAhead`, what follows it:
    /// `readAhead`), its end, or nothing.
    private func serve(
        _ token: UInt64, readingAhead: Bool = true, buffers: inout PumpBuffers, into collected: inout Collected
    ) {
        // A connection paused since this event was collected is not read
        // (HarborPorts' ParkedMessages.swift).
        guard let connection = connection(for: token, buffers: &buffers), !isPaused(token) else { return }
        // Packets that are not messages (wait packets, fragments, refused
        // packets) are read on until a message, the end or an empty
        // socket: a connection left readable by them would wake the
        // port's watchers with nothing to take. Bounded, so a peer
        // streaming them cannot hold the pump for ever.
        var read = receiveOne(on: connection, token: token, buffers: &buffers, into: &collected)
        var budget = PumpBuffers.nonMessageLimit
        while read == .other && budget > 0 {
            budget -= 1
            read = receiveOne(on: connection, token: token, buffers: &buffers, into: &collected)
        }
        if read == .message && readingAhead && collected.takeFirst && connection.kind == .send {
            readAhead(on: connection, token: token, buffers: &buffers, into: &collected)
        }
    }

    /// What `receiveOne` read.
    enum Read: Equatable {
        case message
        /// A message holding rights or regions: read no further ahead.
        case held
        /// A packet that was not a message: a wait packet, a fragment, a
        /// refused packet. More may follow.
        case other
        /// Nothing waits on the socket now.
        case empty
        /// The connection ended and was closed.
        case closed
    }

    /// The connection behind an epoll token: the one the last packet came
    /// from when no connection has left the table since (most events come
    /// from the connection the last one did), else a lookup in the table.
    /// Saves a lock and a hash lookup per event.
    private func connection(for token: UInt64, buffers: inout PumpBuffers) -> OpenConnection? {
        if let cached = buffers.cachedConnection, cached.token == token,
           cached.departures == departures.load(ordering: .acquiring) {
            return OpenConnection(fd: cached.connection.socket.rawValue, kind: cached.connection.kind)
        }
        guard let (found, seen) = table.withLockedValue({ table -> (Connection, UInt64)? in
            table.connections[token].map { ($0, departures.load(ordering: .relaxed)) }
        }) else { return nil }
        buffers.cachedConnection = (token, seen, found)
        return OpenConnection(fd: found.socket.rawValue, kind: found.kind)
    }

    /// A connection's descriptor and kind, without its reference: the pump
    /// cache holds the descriptor open, and the cache is only emptied under
    /// the pump lock, which the pump holds while it uses this.
    struct OpenConnection {
        let fd: CInt
        let kind: WireFormat.ConnectionKind
    }

    /// Receives one packet (or a whole fragmented message) from `connection`
    /// and collects what it was.
    private func receiveOne(
        on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers, into collected: inout Collected
    ) -> Read {
        var received = receive(on: connection, token: token, buffers: &buffers)
        // A fragmented message: read on until it is whole or the socket is
        // empty, rather than one packet per trip through epoll.
        while received.isAssembling {
            received = receive(on: connection, token: token, buffers: &buffers)
        }
        // One pattern per case: Swift 6.3 cannot yet match a `~Copyable`
        // enum with several patterns in one case label.
        switch consume received {
        case .nothing:
            return .empty
        case .assembling:
            return .other
        case .refused(let gaveSlotBack):
            if gaveSlotBack { collected.gaveSlotsBack = true }
            return .other
        case .closed:
            // A message half received from a dead sender goes with it, and
            // gives its slot back.
            if buffers.assemblies.drop(token, returningSlotsTo: counter) { collected.gaveSlotsBack = true }
            buffers.cachedConnection = nil
            close(token)
            collected.arrivals.append(PortArrivals.Ending(token: token, isSendOnce: connection.kind == .sendOnce,
                                                          used: false))
            return .closed
        case .message(var content):
            if connection.kind == .sendOnce {
                // One message is all a send-once connection carries.
                content.countsAgainstLimit = false
                buffers.cachedConnection = nil
                close(token)
                collected.append(message: consume content, from: token)
                collected.arrivals.append(PortArrivals.Ending(token: token, isSendOnce: true, used: true))
            } else {
                // A message holding rights or regions ends a read-ahead: what a
                // pump has read is queued, and charged to its sender's uid
                // (HarborPorts' PortCore+Charges.swift), before more is read, so one pump
                // holds a peer's descriptors past its limits for one message
                // at most, not a batch of them (P12).
                let holds = !content.isPlain
                collected.append(message: consume content, from: token)
                if holds { return .held }
            }
            return .message
        case .waiter(let eventfd):
            registerWaiter(eventfd, token: token)  // one per connection (PortTransport+BackPressure.swift)
            collected.gotWaiter = true
            return .other
        }
    }

    /// Reads what is left on a connection that hung up (every process
    /// holding its sending end is gone) into the port, up to its end, so its
    /// closing is counted and no-senders delivered though nobody receives
    /// on the port (`RemoteDeathWatch` hears the hang-up; see
    /// PortTransport+HangUps.swift). Nothing can arrive after a hang-up: the
    /// loop ends with what the socket already holds. In rounds of a
    /// read-ahead's worth, each queued before the next is read: a round
    /// that finds the queue full parks and pauses the connection, and then
    /// the rest, its end included, is read once a slot frees, by whoever
    /// receives (its closing comes after its messages).
    func reapHangUp(_ token: UInt64, into port: PortCore) {
        var finished = false
        while !finished && !isPaused(token) {
            _ = pumpBuffers.withBuffers { buffers -> Collected in
                var collected = Collected(takeFirst: false)
                guard let connection = connection(for: token, buffers: &buffers) else {
                    finished = true
                    return collected
                }
                var messages = 0
                while messages <= PumpBuffers.readAheadLimit {
                    let read = receiveOne(on: connection, token: token, buffers: &buffers, into: &collected)
                    if read == .closed || read == .empty {
                        finished = true
                        break
                    }
                    if read != .other { messages += 1 }
                }
                return collected
            }.finish(self, port)
        }
    }

    /// After a receiver took a message, reads on from the same connection
    /// (up to `PumpBuffers.readAheadLimit` packets, queued in order) while
    /// packets wait: a stream of messages then costs one `epoll_pwait2` per
    /// batch instead of one per message. A read-ahead that finds nothing costs
    /// a `recvmsg`, so each miss doubles the number of pumps that skip it
    /// (up to 63): request/reply traffic pays about one call in 64.
    private func readAhead(
        on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers, into collected: inout Collected
    ) {
        if buffers.readAheadSkip > 0 {
            buffers.readAheadSkip -= 1
            return
        }
        var count = 0
        while count < PumpBuffers.readAheadLimit,
              receiveOne(on: connection, token: token, buffers: &buffers, into: &collected) == .message {
            count += 1
        }
        if count == 0 {
            buffers.readAheadMisses = min(buffers.readAheadMisses + 1, 6)
            buffers.readAheadSkip = (1 << buffers.readAheadMisses) - 1
        } else {
            buffers.readAheadMisses = 0
        }
    }
}
