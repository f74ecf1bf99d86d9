// Harbor — hearing that a port in another process died, for a dead-name
// request whose notification port is in yet another process; and hearing
// that senders in other processes went, for a port with a no-senders
// request (PortTransport+HangUps.swift).
//
// A dead-name request on a proxy normally puts the proxy's socket in the
// notification port's own epoll set: whoever receives there hears the
// hang-up, and no thread is needed. When the notification port is itself a
// proxy, nobody in this process receives on it, so nothing would notice the
// death until a send failed. For those requests (and only those) one thread
// per process waits on an epoll set of such sockets, started with the first
// request and gone with the last: it wakes on hang-up, fires the proxy's
// dead-name requests (sent on to the other process), and costs nothing when
// no such request exists. The same thread watches the send connections of
// ports that asked for no-senders: on a connection's hang-up it reads the
// rest of that connection into its port, so the closing is counted and the
// notification sent though nobody receives there.
import Synchronization
import HarborSystem
import HarborPorts

package final class RemoteDeathWatch: Sendable {
    package static let shared = RemoteDeathWatch()

    private static let wakeToken: UInt64 = 0

    /// The epoll set and wake-up eventfd of one watching thread; closed when
    /// the last reference (the thread's own, or a caller's waking it) goes.
    private final class Running: Sendable {
        let epoll: Epoll
        let wake: EventDescriptor
        init() throws(SystemError) {
            epoll = try Epoll()
            wake = try EventDescriptor()
            try epoll.add(wake.rawValue, events: .readable, token: RemoteDeathWatch.wakeToken)
        }
    }

    private struct Entry {
        /// The socket watched for hang-up only: a proxy's (the proxy removes
        /// the watch in its deinit, before the socket closes), or a
        /// connection's receiving end (its transport removes the watch
        /// before closing it).
        var socket: CInt
        weak var proxy: PortCore?
        /// For a connection: the transport reading it, its token there,
        /// and the port it delivers to.
        weak var transport: PortTransport?
        var connection: UInt64 = 0
        weak var port: PortCore?
    }

    private struct State: ~Copyable {
        var entries: [UInt64: Entry] = [:]
        var nextToken: UInt64 = 1
        var running: Running?
    }

    private let state = HarborLock(State())
    /// Watching threads not yet finished (one at most, and a retiring one).
    private let threads = Atomic<Int>(0)
    /// The latest watching thread (`SystemThread.id`), which must not wait for itself.
    private let threadSelf = Atomic<UInt>(0)
    /// Passes of the thread that hold ports they took from the table: from
    /// taking them (before any notification is sent) to letting them go.
    private let holding = Atomic<Int>(0)

    private init() {}

    /// Waits until the thread holds no port it took to deliver a death or a
    /// hang-up, and a thread retired by its last watch's removal has let go
    /// of its epoll set (or `timeout` passes); true if so. A notification
    /// the thread sent can reach its receiver before the thread has let go
    /// of the port it came from; whoever checks afterwards that the port is
    /// gone (a test counting descriptors) waits here first.
    package func waitUntilQuiescent(timeout: Duration) -> Bool {
        pollUntil(timeout: timeout, every: .microseconds(200)) {
            holding.load(ordering: .sequentiallyConsistent) == 0 && !isRetiring
        }
    }

    /// Waits until no watching thread runs (or `timeout` passes); true if
    /// none does. For tests: a notification the thread delivers reaches its
    /// receiver before the thread lets go of the ports it read.
    package func waitUntilIdle(timeout: Duration) -> Bool {
        pollUntil(timeout: timeout, every: .milliseconds(1)) { threads.load(ordering: .sequentiallyConsistent) == 0 }
    }

    /// A thread runs although no watch needs it: it is on its way out.
    private var isRetiring: Bool {
        threads.load(ordering: .sequentiallyConsistent) > 0 && state.withLockedValue { $0.running == nil }
    }

    /// Watches `proxy`'s socket; on hang-up calls `proxy.remoteDied()`.
    /// Returns the token for `remove`, or nil if no thread could be started.
    package func add(_ proxy: PortCore, socket: CInt) -> UInt64? {
        add(Entry(socket: socket, proxy: proxy))
    }

    /// Watches the receiving end `socket` of connection `token` of
    /// `transport`; on hang-up has the transport read the rest of it into
    /// `port` (`PortTransport.reapHangUp`). Returns the token for `remove`,
    /// or nil if no thread could be started.
    func add(connection socket: CInt, token: UInt64, of transport: PortTransport, port: PortCore) -> UInt64? {
        add(Entry(socket: socket, transport: transport, connection: token, port: port))
    }

    private func add(_ entry: Entry) -> UInt64? {
        let socket = entry.socket
        var started: Running?
        let token = state.withLockedValue { state -> UInt64? in
            let running: Running
            if let existing = state.running {
                running = existing
            } else {
                guard let fresh = try? Running() else { return nil }
                running = fresh
                state.running = fresh
                started = fresh
            }
            let token = state.nextToken
            state.nextToken += 1
            // No events asked for: epoll reports hang-up and error regardless.
            guard (try? running.epoll.add(socket, events: [], token: token)) != nil else {
                if started != nil { state.running = nil; started = nil }
                return nil
            }
            state.entries[token] = entry
            return token
        }
        if let started { startThread(started) }
        return token
    }

    /// Stops watching (the proxy died, or its request was satisfied).
    package func remove(_ token: UInt64) {
        let toWake = state.withLockedValue { state -> Running? in
            guard let entry = state.entries.removeValue(forKey: token), let running = state.running else { return nil }
            try? running.epoll.remove(entry.socket)
            guard state.entries.isEmpty else { return nil }
            state.running = nil
            return running
        }
        guard let toWake else { return }
        // Outside the lock: the thread wakes, sees it is retired, and exits,
        // closing its set and eventfd (this reference goes first). A moment's
        // wait for that, so that whoever removed the last watch (a receiver
        // that read the connection's end itself) finds the process's
        // descriptors as they were before the first watch; not on the
        // thread itself, which cannot wait for its own end.
        toWake.wake.signal()
        _ = consume toWake
        if threadSelf.load(ordering: .relaxed) != SystemThread.current.id {
            _ = waitUntilIdle(timeout: .milliseconds(10))
        }
    }

    private func startThread(_ running: Running) {
        /// Hands `running` to the thread, which takes it out, so its
        /// descriptors close when the thread retires (not when the closure
        /// that started the thread is released, a moment later).
        final class HandOff: Sendable {
            private let slot: HarborLock<Running?>
            init(_ running: Running) { slot = HarborLock(running) }
            func take() -> Running? { slot.withLockedValue { $0.take() } }
        }
        threads.add(1, ordering: .sequentiallyConsistent)
        let handOff = HandOff(running)
        do {
            try SystemThread.spawn { [self] in
                guard let running = handOff.take() else { return }
                threadSelf.store(SystemThread.current.id, ordering: .relaxed)
                serve(running)
                // Everything the thread held (ports, transports, its set) is released by now.
                threads.subtract(1, ordering: .sequentiallyConsistent)
            }.detach()
        } catch {
            threads.subtract(1, ordering: .sequentiallyConsistent)
            _ = handOff.take()
            state.withLockedValue { state in
                if state.running === running { state.running = nil; state.entries.removeAll() }
            }
        }
    }

    /// The thread: waits for hang-ups until no watch is left.
    private func serve(_ running: consuming Running) {
        var running: Running? = running
        let events = UnsafeMutableBufferPointer<EpollEvent>.allocate(capacity: 16)
        defer { events.deallocate() }
        while true {
            var died: [PortCore] = []
            var hungUp: [(transport: PortTransport, connection: UInt64, port: PortCore)] = []
            var retired = true
            do {
                guard let current = running else { return }
                let count = (try? current.epoll.wait(into: events, timeoutMilliseconds: -1)) ?? 0
                retired = state.withLockedValue { state -> Bool in
                    // Counted before any port is taken, so before anything is delivered.
                    holding.add(1, ordering: .sequentiallyConsistent)
                    for event in events[0..<count] {
                        let token = event.token
                        if token == Self.wakeToken { _ = current.wake.drain(); continue }
                        guard let entry = state.entries.removeValue(forKey: token) else { continue }
                        try? current.epoll.remove(entry.socket)
                        if let proxy = entry.proxy { died.append(proxy) }
                        if let transport = entry.transport, let port = entry.port {
                            hungUp.append((transport, entry.connection, port))
                        }
                    }
                    if state.running === current, state.entries.isEmpty { state.running = nil }
                    return state.running !== current
                }
            }
            // The set and eventfd close (last reference) before anyone hears of the death.
            if retired { running = nil }
            for proxy in died { proxy.remoteDied() }
            for connection in hungUp { connection.transport.reapHangUp(connection.connection, into: connection.port) }
            died.removeAll()
            hungUp.removeAll()
            holding.subtract(1, ordering: .sequentiallyConsistent)
            if retired { return }
        }
    }
}
