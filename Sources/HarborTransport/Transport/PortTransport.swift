// Harbor — a port's receiving side for other processes: its connections.
//
// Each connection is the receiving end of a SEQPACKET socket whose other end
// (shared by every process holding that send right) the kernel counts: EOF
// here means every sender on it is gone, exact even after SIGKILL. The
// sockets sit in the port's readiness epoll set, so the one descriptor a run
// loop watches fires for them too. No thread: whoever receives pumps.
//
// Receiving: the pump (waiting, batching, handing messages to the port) is
// in PortTransport+Pump.swift, one packet off a connection in
// PortTransport+Packet.swift, fragment reassembly in
// PortTransport+Fragments.swift, the pump's buffers in PumpBuffers.swift.
// Back-pressure (waiters, grants, the counter's repair) is in
// PortTransport+BackPressure.swift; pausing a connection whose messages
// park in PortTransport+Parking.swift. What the transport reads reaches the
// port through one call, `PortCore.admit` (HarborPorts' Admission/, which
// also keeps what each uid's queued messages hold and the parked messages).
//
// Locks: `pump` (the receive buffers) is taken before `table`, never after.
// Only non-blocking calls (recvmsg, epoll_ctl, eventfd write) run under them;
// messages are queued and notifications delivered after both are released.
// `table` is also taken under the port's own lock (pausing and resuming a
// connection), and nothing is taken under it.
import Synchronization
import HarborSystem
import HarborPorts

package final class PortTransport: Sendable {
    /// The epoll token of the port's own eventfd in its readiness set.
    package static let readinessToken: UInt64 = 0
    static let connectionTag: UInt64 = 1 << 56
    static let watchTag: UInt64 = 2 << 56

    package let slots: SharedSlots
    /// `slots`' counter, made once: the pump reads it on every pass.
    package let counter: SharedSlots.Counter
    /// The owning port's readiness set, which outlives `shutDown()`.
    let epollFD: CInt

    struct Connection {
        var socket: SharedDescriptor
        var kind: WireFormat.ConnectionKind
    }

    struct Watch {
        var route: RemoteRoute
        weak var proxy: PortCore?
    }

    struct Table: ~Copyable {
        var connections: [UInt64: Connection] = [:]
        var watches: [UInt64: Watch] = [:]
        /// Eventfds of senders in other processes waiting for a slot, one
        /// per connection (`PeerLimits.waitersPerConnection`), by its token.
        var waiters: [UInt64: SharedDescriptor] = [:]
        /// The receiver's own view of back-pressure (PortTransport+BackPressure.swift).
        var backPressure = BackPressure()
        var nextToken: UInt64 = 1
        var isShutDown = false
        /// Set once the port asked for no-senders (PortTransport+HangUps.swift).
        var hangUps: HangUpWatches?
        /// Connections out of the readiness set while their messages park
        /// (HarborPorts' ParkedMessages.swift).
        var paused: Set<UInt64> = []
    }

    let table = HarborLock(Table())
    let pumpBuffers = HarborLock(PumpBuffers())
    /// Bumped, under the table lock, whenever a connection leaves the
    /// table: the pump's cached connection is good while this is unchanged.
    let departures = Atomic<UInt64>(0)
    /// Whether each message's sender's cgroup is read at receipt
    /// (`readSenderCgroups()`); set once, under the table lock.
    let readsSenderCgroups = Atomic<Bool>(false)

    package init(slots: SharedSlots, epollFD: CInt) {
        self.slots = slots
        counter = slots.counter
        self.epollFD = epollFD
    }

    // MARK: Connections

    /// Makes a new connection; returns the sending end to hand to another process.
    package func makeConnection(_ kind: WireFormat.ConnectionKind) throws(SystemError) -> SharedDescriptor {
        try makeWithdrawableConnection(kind).sending
    }

    /// Makes a new connection; returns its sending end and the token that
    /// `withdraw` takes to forget it, should the right it stands for never leave.
    package func makeWithdrawableConnection(
        _ kind: WireFormat.ConnectionKind
    ) throws(SystemError) -> (sending: SharedDescriptor, token: UInt64?) {
        let (receiving, sending) = try SeqPacketSocket.makePair()
        try SeqPacketSocket.passCredentials(receiving.rawValue)
        // What a sender may have in flight on it, and what a peer that stops
        // reading pins of kernel memory (PeerLimits.connectionBufferBytes).
        try? SeqPacketSocket.setSendBuffer(sending.rawValue, bytes: PeerLimits.connectionBufferBytes)
        let token = try adopt(receiving, kind: kind)
        return (sending, token)
    }

    /// Forgets a connection without reporting its closing: the send that
    /// would have carried its sending end away failed.
    package func withdraw(_ token: UInt64) {
        // The pump may hold the connection in its cache: let go of it, so the
        // descriptor closes now and not at the next pump.
        pumpBuffers.withLockedValue { buffers in
            if buffers.cachedConnection?.token == token { buffers.cachedConnection = nil }
        }
        close(token)
    }

    /// Starts receiving on a connection's receiving end (made here, or moved in).
    @discardableResult
    package func adopt(_ socket: SharedDescriptor, kind: WireFormat.ConnectionKind) throws(SystemError) -> UInt64? {
        let (token, passPidfds) = table.withLockedValue { table -> (UInt64?, Bool) in
            if table.isShutDown { return (nil, false) }
            defer { table.nextToken += 1 }
            let token = Self.connectionTag | table.nextToken
            table.connections[token] = Connection(socket: socket, kind: kind)
            // Read under the lock `readSenderCgroups()` sets it under: each
            // socket is set up by exactly one of the two.
            return (token, readsSenderCgroups.load(ordering: .relaxed))
        }
        guard let token else { return nil }
        if passPidfds { Self.passSenderPidfds(socket) }
        do {
            try EpollControl.add(epollFD, socket.rawValue, events: .readable, token: token)
        } catch {
            _ = table.withLockedValue { table in
                departures.add(1, ordering: .releasing)
                return table.connections.removeValue(forKey: token)
            }
            throw error
        }
        table.withLockedValue { table in
            if let connection = table.connections[token] { watchHangUp(of: connection, token: token, in: &table) }
        }
        return token
    }

    /// From now on, reads the cgroup of each message's sender at receipt
    /// (HarborPorts' `ReceiveRight.readSenderCgroups()`): every connection,
    /// those adopted later too, has the kernel attach the sender's pidfd
    /// (SCM_PIDFD), and the pump reads the cgroup through it
    /// (PortTransport+SenderCgroup.swift). A leaf, under the port's lock.
    package func readSenderCgroups() {
        let sockets = table.withLockedValue { table -> [SharedDescriptor] in
            guard !readsSenderCgroups.exchange(true, ordering: .relaxed) else { return [] }
            return table.connections.values.map(\.socket)
        }
        for socket in sockets { Self.passSenderPidfds(socket) }
    }

    /// Turns SCM_PIDFD on for `socket`. A kernel without it (before 6.5),
    /// or a failure, leaves the socket as it was: its messages then carry
    /// no cgroup, and a requirement reads it by pid (Docs/Security.md).
    private static func passSenderPidfds(_ socket: SharedDescriptor) {
        _ = try? SeqPacketSocket.passSenderPidfds(socket.rawValue)
    }

    /// Takes every connection out, for a receive right leaving the process.
    package func takeConnections() -> [(kind: WireFormat.ConnectionKind, socket: SharedDescriptor)] {
        let taken = table.withLockedValue { table in
            departures.add(1, ordering: .releasing)
            unwatchAllHangUps(in: &table)
            table.paused.removeAll()
            defer { table.connections.removeAll() }
            return Array(table.connections.values)
        }
        for connection in taken { EpollControl.remove(epollFD, connection.socket.rawValue) }
        return taken.map { ($0.kind, $0.socket) }
    }

    /// Forgets a connection and closes it, and its waiter. The pump, which
    /// calls this under its lock, drops its cached connection first
    /// (``PumpBuffers``); a caller outside the pump uses `withdraw`.
    func close(_ token: UInt64) {
        let (connection, waiter) = table.withLockedValue { table -> (Connection?, SharedDescriptor?) in
            departures.add(1, ordering: .releasing)
            unwatchHangUp(token, in: &table)
            table.paused.remove(token)
            let waiter = table.waiters.removeValue(forKey: token)
            if waiter != nil { slots.setRegisteredWaiters(table.waiters.count) }
            return (table.connections.removeValue(forKey: token), waiter)
        }
        _ = waiter  // closed here, outside the lock
        guard let connection else { return }
        EpollControl.remove(epollFD, connection.socket.rawValue)
    }

    /// The number of connections (what a receive right moved in holds).
    package var connectionCount: Int { table.withLockedValue { $0.connections.count } }

    // MARK: Watching other processes' ports for their death

    /// Reports `proxy`'s death (its connection hanging up) by pumping this port.
    package func addWatch(on route: RemoteRoute, for proxy: PortCore) throws(SystemError) -> UInt64 {
        let token = table.withLockedValue { table -> UInt64 in
            defer { table.nextToken += 1 }
            let token = Self.watchTag | table.nextToken
            table.watches[token] = Watch(route: route, proxy: proxy)
            return token
        }
        do {
            // No events asked for: epoll reports hang-up and error regardless.
            try EpollControl.add(epollFD, route.socket.rawValue, events: [], token: token)
        } catch {
            _ = table.withLockedValue { $0.watches.removeValue(forKey: token) }
            throw error
        }
        return token
    }

    package func removeWatch(_ token: UInt64) {
        guard let watch = table.withLockedValue({ $0.watches.removeValue(forKey: token) }) else { return }
        EpollControl.remove(epollFD, watch.route.socket.rawValue)
    }

    // MARK: Shutting down

    /// Closes every connection (senders elsewhere see hang-up) and waiter.
    /// Waiters are woken first: if the port moved, they register again
    /// through their connection with its new holder.
    package func shutDown() {
        let (connections, watches, waiters) = pumpBuffers.withLockedValue { buffers in
            buffers.assemblies.removeAll(returningSlotsTo: counter)
            buffers.cachedConnection = nil
            return table.withLockedValue { table in
                departures.add(1, ordering: .releasing)
                table.isShutDown = true
                unwatchAllHangUps(in: &table)
                defer {
                    table.connections.removeAll()
                    table.watches.removeAll()
                    table.waiters.removeAll()
                    table.paused.removeAll()
                    slots.setRegisteredWaiters(0)
                }
                return (Array(table.connections.values), Array(table.watches.values), Array(table.waiters.values))
            }
        }
        // The port dropped its parked messages with its ledger.
        slots.setParked(0)
        for waiter in waiters { Self.signal(waiter, SharedSlots.wake) }
        for connection in connections { EpollControl.remove(epollFD, connection.socket.rawValue) }
        for watch in watches { EpollControl.remove(epollFD, watch.route.socket.rawValue) }
    }
}
