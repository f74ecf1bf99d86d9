// Harbor — a port's transport, receiving: pumping its connections into the queue.
//
// Whoever receives pumps (a blocking receive, a run-loop pass, tryDequeue):
// no thread reads the sockets. Lock order as in PortTransport.swift: the
// pump buffers before the table, never after.
import CHarborLinux
import DequeModule
import Glibc
import Synchronization

extension PortTransport {

    /// What a pump found, to act on once the locks are released.
    package enum Arrival: Sendable {
        case closed(WireFormat.ConnectionKind, used: Bool)
        case hungUp(PortCore)
    }

    /// What a pump did, for a receiver deciding whether to wait again.
    /// `~Copyable`, like the other wrappers a message passes through on its
    /// way to a receiver: moved, never copied (see `Collected`).
    package struct PumpOutcome: ~Copyable, Sendable {
        /// The first message that arrived, handed straight to the pumping
        /// receiver (only when asked for and the queue was empty).
        package var taken: MessageContent?
        /// Any descriptor in the set was ready (false: the wait timed out).
        package var sawEvents = false
        /// Only the port's own eventfd was ready.
        package var onlyReadiness = false
    }

    /// Reads what the ready sockets hold and queues it on `port`.
    ///
    /// With `deadline` other than `.immediately`, first sleeps in
    /// `epoll_pwait2` on the port's readiness set (outside the locks, so
    /// other receivers and `tryReceive` are never held up): one system call
    /// where waiting on the set and then polling it took two. With
    /// `takeFirst`, the first message goes straight to the caller when the
    /// queue is empty, so the readiness eventfd is neither written nor
    /// drained for it (two system calls fewer per message).
    @discardableResult
    package func pump(
        into port: PortCore, deadline: WaitDeadline = .immediately, takeFirst: Bool = false
    ) -> PumpOutcome {
        if case .immediately = deadline {
            return pumpBuffers.withLock { buffers in
                let count = EpollControl.poll(epollFD, into: buffers.events)
                return process(UnsafeMutableBufferPointer(rebasing: buffers.events[0..<count]), buffers: &buffers,
                               into: port, takeFirst: takeFirst)
            }.finish(self, port)
        }
        // Events land on the stack (the pump lock is not held while asleep)
        // and are processed from there.
        return withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: 32) { stack in
            let count = Self.wait(epollFD, stack, deadline: deadline)
            // Passed by address: this thread's own stack, read only inside
            // the lock below, on this thread, before the allocation ends.
            let address = UInt(bitPattern: stack.baseAddress)
            return pumpBuffers.withLock { buffers in
                let base = UnsafeMutablePointer<epoll_event>(bitPattern: address)
                return process(UnsafeMutableBufferPointer(start: base, count: count), buffers: &buffers,
                               into: port, takeFirst: takeFirst)
            }
        }.finish(self, port)
    }

    /// Sleeps until the set has events or `deadline` passes. C: `epoll_pwait2(2)`.
    private static func wait(_ epollFD: CInt, _ events: UnsafeMutableBufferPointer<epoll_event>,
                             deadline: WaitDeadline) -> Int {
        let result: CInt
        if var spec = deadline.remaining() {
            result = charbor_epoll_pwait2(epollFD, events.baseAddress, CInt(events.count), &spec)
        } else {
            result = charbor_epoll_pwait2(epollFD, events.baseAddress, CInt(events.count), nil)
        }
        return result > 0 ? Int(result) : 0  // EINTR: the caller looks again
    }

    /// Work collected under the pump lock, done after it is released.
    ///
    /// Messages are moved along, never copied: each copy of a message costs
    /// a retain and a release of every buffer it holds, which on this path
    /// cost more than the system calls' user-space share.
    fileprivate struct Collected: ~Copyable, Sendable {
        /// The first message (the usual pump: one message, no array), which
        /// alone may skip the queue.
        var firstMessage: MessageContent?
        /// Messages after the first (a read-ahead), queued under one lock.
        /// A deque: taken from the front, each is moved, not copied. Nil
        /// until a read-ahead finds one: an empty deque still holds (and
        /// retains) a shared storage object.
        var messages: Deque<MessageContent>?
        /// Connections closing and proxies hanging up, acted on after the
        /// messages: whatever a connection delivered comes before its end.
        var events: [Arrival] = []
        var gotWaiter = false
        var sawEvents = false
        var onlyReadiness = false
        let takeFirst: Bool

        init(takeFirst: Bool) { self.takeFirst = takeFirst }

        mutating func append(message content: consuming MessageContent) {
            if firstMessage == nil {
                firstMessage = consume content
            } else {
                if messages == nil {
                    var batch = Deque<MessageContent>()
                    batch.reserveCapacity(PumpBuffers.readAheadLimit)
                    messages = batch
                }
                messages!.append(consume content)
            }
        }

        mutating func append(_ arrival: Arrival) { events.append(arrival) }

        consuming func finish(_ transport: PortTransport, _ port: PortCore) -> PumpOutcome {
            if gotWaiter { transport.signalWaiters() }
            var outcome = PumpOutcome()
            outcome.sawEvents = sawEvents
            outcome.onlyReadiness = onlyReadiness
            if let first = firstMessage.take() {
                if takeFirst {
                    outcome.taken = port.acceptRemoteAndTake(consume first)
                } else {
                    port.acceptRemote(consume first)
                }
            }
            if messages != nil { port.acceptRemote(batch: &messages!) }
            if !events.isEmpty {
                for arrival in events { Self.act(on: arrival, port) }
            }
            return outcome
        }

        private static func act(on arrival: Arrival, _ port: PortCore) {
            switch arrival {
            case .closed(let kind, let used): port.connectionClosed(kind, used: used)
            case .hungUp(let proxy): proxy.remoteDied()
            }
        }
    }

    private func process(
        _ events: UnsafeMutableBufferPointer<epoll_event>, buffers: inout PumpBuffers,
        into port: PortCore, takeFirst: Bool
    ) -> Collected {
        var collected = Collected(takeFirst: takeFirst)
        collected.sawEvents = !events.isEmpty
        var sawOther = false
        for event in events {
            let token = event.data.u64
            if token == Self.readinessToken { continue }
            sawOther = true
            if token & Self.watchTag != 0 {
                guard let watch = table.withLock({ $0.watches.removeValue(forKey: token) }) else { continue }
                EpollControl.remove(epollFD, watch.route.socket.rawValue)
                if let proxy = watch.proxy { collected.append(.hungUp(proxy)) }
                continue
            }
            guard let connection = connection(for: token, buffers: &buffers) else { continue }
            let gotMessage = receiveOne(on: connection, token: token, buffers: &buffers, into: &collected)
            if gotMessage && takeFirst && connection.kind == .send {
                readAhead(on: connection, token: token, buffers: &buffers, into: &collected)
            }
        }
        collected.onlyReadiness = collected.sawEvents && !sawOther
        return collected
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
        guard let (found, seen) = table.withLock({ table -> (Connection, UInt64)? in
            table.connections[token].map { ($0, departures.load(ordering: .relaxed)) }
        }) else { return nil }
        buffers.cachedConnection = (token, seen, found)
        return OpenConnection(fd: found.socket.rawValue, kind: found.kind)
    }

    /// A connection's descriptor and kind, without its reference: the pump
    /// cache holds the descriptor open, and the cache is only emptied under
    /// the pump lock, which the pump holds while it uses this.
    private struct OpenConnection {
        let fd: CInt
        let kind: WireFormat.ConnectionKind
    }

    /// Receives one packet (or a whole fragmented message) from `connection`
    /// and collects what it was; true when that was a message.
    private func receiveOne(
        on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers, into collected: inout Collected
    ) -> Bool {
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
            return false
        case .assembling:
            return false
        case .closed:
            // A message half received from a dead sender goes with it.
            buffers.assemblies[token] = nil
            buffers.cachedConnection = nil
            close(token)
            collected.append(.closed(connection.kind, used: false))
            return false
        case .message(var content):
            if connection.kind == .sendOnce {
                // One message is all a send-once connection carries.
                content.countsAgainstLimit = false
                buffers.cachedConnection = nil
                close(token)
                collected.append(message: consume content)
                collected.append(.closed(.sendOnce, used: true))
            } else {
                collected.append(message: consume content)
            }
            return true
        case .waiter(let eventfd):
            table.withLock { $0.waiters.append(eventfd) }
            collected.gotWaiter = true
            return false
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
              receiveOne(on: connection, token: token, buffers: &buffers, into: &collected) {
            count += 1
        }
        if count == 0 {
            buffers.readAheadMisses = min(buffers.readAheadMisses + 1, 6)
            buffers.readAheadSkip = (1 << buffers.readAheadMisses) - 1
        } else {
            buffers.readAheadMisses = 0
        }
    }

    private enum Received: ~Copyable {
        case nothing, closed
        /// Part of a fragmented message arrived; more may be waiting.
        case assembling
        case message(MessageContent)
        case waiter(SharedDescriptor)

        var isAssembling: Bool {
            switch self {
            case .assembling: true
            default: false
            }
        }
    }

    private func receive(on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers) -> Received {
        // While one message is being reassembled here, the next packet is most
        // likely its fragment: its data goes straight into the region.
        guard !buffers.assemblies.isEmpty, let list = buffers.assemblies[token], list.count == 1,
              let destination = list[0].nextDestination else {
            return receiveWithSpareBody(on: connection, token: token, buffers: &buffers)
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: destination.prefix(WireFormat.maximumFragmentData))
        var packet: ReceivedPacket
        do {
            guard let received = try SeqPacketSocket.receive(
                connection.fd, into: buffers.packet, scatter: (WireFormat.headerSize, target),
                control: buffers.control)
            else { return .nothing }
            packet = received
        } catch {
            return .closed  // ECONNRESET and the like: the peer is gone
        }
        if packet.isEndOfFile { return .closed }
        if packet.byteCount > WireFormat.headerSize {
            let direct = Self.directFragment(packet, buffers.packet, target, assemblies: &buffers.assemblies[token])
            switch consume direct {
            case .progress:  // (one pattern per case, as above)
                return .assembling
            case .refused:
                return .assembling
            case .complete(let content):
                buffers.assemblies[token] = nil
                return .message(content)
            case .other:
                Self.gather(&packet, into: buffers.packet, from: UnsafeRawBufferPointer(target))
            }
        }
        return decodeBuffered(packet, token: token, buffers: &buffers)
    }

    /// Receives a packet while no fragmented message is in progress: the
    /// bytes after the header land in the pump's spare body, so a large plain
    /// message (half the spare or more) takes the spare as its body and its
    /// bytes are never copied after the kernel's copy. Every other packet is
    /// put back together in the packet buffer and decoded as usual.
    private func receiveWithSpareBody(on connection: OpenConnection, token: UInt64, buffers: inout PumpBuffers) -> Received {
        var spare = buffers.spareBody.take() ?? PumpBuffers.makeSpareBody()
        let packetBuffer = buffers.packet, control = buffers.control, fd = connection.fd
        // Plain values only until the packet is known to need more (no
        // optional struct with a reference in it, which costs outlined
        // copies and value-witness calls per packet).
        var receipt = SeqPacketSocket.Receipt(byteCount: 0, flags: 0, controlLength: 0)
        var state = 0  // 0: nothing waits, 1: received, 2: failed
        spare.withUnsafeMutableBytes { target in
            do {
                if let got = try SeqPacketSocket.receiveRaw(fd, into: packetBuffer, scatter: (WireFormat.headerSize, target),
                                                            control: control) {
                    receipt = got
                    state = 1
                }
            } catch {
                state = 2  // ECONNRESET and the like: the peer is gone
            }
        }
        guard state == 1 else {
            buffers.spareBody = consume spare
            return state == 0 ? .nothing : .closed
        }
        // A plain message (most are) is decoded here, its body taken from
        // the spare: handed over whole when large, copied out when small.
        if !receipt.wasTruncated, let sender = SeqPacketSocket.credentialsAlone(receipt, control: control),
           let plain = InboundPacket.PlainHeader(UnsafeRawBufferPointer(packetBuffer), byteCount: receipt.byteCount) {
            if plain.bodyLength >= PumpBuffers.spareHandOver {
                spare.removeLast(spare.count - plain.bodyLength)
                return .message(plain.content(body: consume spare, sender: sender))
            }
            let length = plain.bodyLength
            let body = spare.withUnsafeBytes { [UInt8](UnsafeRawBufferPointer(start: $0.baseAddress, count: length)) }
            buffers.spareBody = consume spare
            return .message(plain.content(body: body, sender: sender))
        }
        var packet = SeqPacketSocket.packet(receipt, control: control)
        if packet.isEndOfFile {
            buffers.spareBody = consume spare
            return .closed
        }
        if packet.byteCount > WireFormat.headerSize {
            spare.withUnsafeBytes { Self.gather(&packet, into: packetBuffer, from: $0) }
        }
        buffers.spareBody = consume spare
        return decodeBuffered(packet, token: token, buffers: &buffers)
    }

    /// Puts a packet received scattered (header in `buffer`, the next
    /// `target.count` bytes in `target`, the rest after the header in
    /// `buffer`) back together in `buffer`; one too long for `buffer` is
    /// marked truncated, so decoding refuses it.
    private static func gather(
        _ packet: inout ReceivedPacket, into buffer: UnsafeMutableRawBufferPointer, from target: UnsafeRawBufferPointer
    ) {
        guard packet.byteCount <= buffer.count else {
            packet.wasTruncated = true  // fits the scattered buffers, not the packet buffer
            return
        }
        let inTarget = min(target.count, packet.byteCount - WireFormat.headerSize)
        let after = packet.byteCount - WireFormat.headerSize - inTarget
        let base = buffer.baseAddress!
        if after > 0 {
            (base + WireFormat.headerSize + inTarget).copyMemory(from: base + WireFormat.headerSize, byteCount: after)
        }
        (base + WireFormat.headerSize).copyMemory(from: target.baseAddress!, byteCount: inTarget)
    }

    /// Decodes a packet whose bytes are all in the packet buffer.
    private func decodeBuffered(_ packet: ReceivedPacket, token: UInt64, buffers: inout PumpBuffers) -> Received {
        do {
            let decoded = try InboundPacket.decode(UnsafeRawBufferPointer(buffers.packet), packet)
            switch consume decoded {
            case .message(let content): return .message(content)
            case .wait(let eventfd): return .waiter(eventfd)
            case .started(let assembly):
                try Self.start(assembly, in: &buffers.assemblies[token, default: []])
                return .assembling
            case .fragment(let range, let sender):
                let bytes = UnsafeRawBufferPointer(rebasing: buffers.packet[range])
                guard let content = try Self.add(bytes, from: sender, to: &buffers.assemblies[token, default: []]) else {
                    return .assembling
                }
                if buffers.assemblies[token]?.isEmpty == true { buffers.assemblies[token] = nil }
                return .message(content)
            }
        } catch {
            WireRejections.record(error.reason)
            return .nothing  // `packet.descriptors` closes whatever came with it
        }
    }

    /// A packet received scattered into `target`: if it is the awaited
    /// fragment (from the assembly's sender, no descriptors, a valid fragment
    /// header whose data all landed in `target`), records it and returns
    /// progress (or the whole message); a malformed fragment from that
    /// sender refuses the message; any other packet is the caller's.
    private enum Direct: ~Copyable {
        case other, refused, progress
        case complete(MessageContent)
    }

    private static func directFragment(
        _ packet: ReceivedPacket, _ buffer: UnsafeMutableRawBufferPointer, _ target: UnsafeMutableRawBufferPointer,
        assemblies list: inout [FragmentAssembly]?
    ) -> Direct {
        guard buffer[1] == WireFormat.Kind.fragment.rawValue, let sender = packet.sender,
              !packet.wasTruncated, !packet.controlWasTruncated, packet.descriptorCount == 0,
              var assemblies = list, assemblies.count == 1, assemblies[0].sender.pid == sender.pid,
              packet.byteCount - WireFormat.headerSize <= target.count else { return .other }
        // Check the header as parseFragment would, with the data elsewhere.
        let header = UnsafeRawBufferPointer(rebasing: buffer[0..<WireFormat.headerSize])
        let data = packet.byteCount - WireFormat.headerSize
        let declared = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let total = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 20, as: UInt32.self)))
        let zeros = header.loadUnaligned(fromByteOffset: 2, as: UInt16.self) == 0
            && header.loadUnaligned(fromByteOffset: 4, as: UInt32.self) == 0
            && header.loadUnaligned(fromByteOffset: 12, as: UInt32.self) == 0
            && header.loadUnaligned(fromByteOffset: 16, as: UInt32.self) == 0
        guard header[0] == WireFormat.version, zeros, declared == data, total == packet.byteCount else {
            list = nil
            WireRejections.record(.badFragment)
            return .refused
        }
        assemblies[0].advance(by: data)
        if assemblies[0].isComplete { return .complete(assemblies[0].content) }
        list = assemblies
        return .progress
    }

    /// Begins reassembling a fragmented message on one connection. A new
    /// message from a sender whose previous one is unfinished replaces it
    /// (that sender gave up on it); a connection holds at most
    /// `WireFormat.maximumAssemblies`, and makes room only by dropping those
    /// of senders that have died.
    private static func start(_ assembly: FragmentAssembly, in list: inout [FragmentAssembly]) throws(WireRejection) {
        if let stale = list.firstIndex(where: { $0.sender.pid == assembly.sender.pid }) {
            list.remove(at: stale)
            WireRejections.record(.badFragment)
        }
        if list.count >= WireFormat.maximumAssemblies {
            list.removeAll { kill($0.sender.pid, 0) != 0 && errno == ESRCH }
        }
        guard list.count < WireFormat.maximumAssemblies else {
            throw WireRejection(.badFragment, "\(list.count) fragmented messages already in progress")
        }
        list.append(assembly)
    }

    /// Adds a fragment to its sender's message; returns the message once whole.
    private static func add(
        _ bytes: UnsafeRawBufferPointer, from sender: ProcessIdentity, to list: inout [FragmentAssembly]
    ) throws(WireRejection) -> MessageContent? {
        guard let index = list.firstIndex(where: { $0.sender.pid == sender.pid }) else {
            throw WireRejection(.badFragment, "a fragment from \(sender.pid) belongs to no message")
        }
        do { try list[index].append(bytes) } catch {
            list.remove(at: index)  // the whole message is refused, not only the fragment
            throw error
        }
        guard list[index].isComplete else { return nil }
        return list.remove(at: index).content
    }
}

/// The pump's reusable buffers: one packet, its control data, epoll events.
struct PumpBuffers: ~Copyable {
    let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: WireFormat.maximumInlinePacket + 4096, alignment: 16)
    let control = UnsafeMutableRawBufferPointer.allocate(byteCount: SeqPacketSocket.controlCapacity, alignment: 16)
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 32)
    /// Fragmented messages being reassembled, by connection token.
    var assemblies: [UInt64: [FragmentAssembly]] = [:]
    /// The connection the last event came from, and the transport's
    /// `departures` when it was looked up. Holding it keeps its descriptor
    /// open, so it is dropped whenever the pump or a shutdown closes
    /// connections; a departure elsewhere only makes it stale.
    var cachedConnection: (token: UInt64, departures: UInt64, connection: PortTransport.Connection)?
    /// Where the bytes after a packet's header land when no fragmented
    /// message is in progress: a whole inline body's room, its count the
    /// capacity (the bytes are overwritten before anyone reads them). Nil
    /// after it became a message's body, until the next packet.
    var spareBody: [UInt8]?
    /// A plain message whose body is at least this long takes the spare as
    /// its body; a shorter one is copied out, so no body holds more than
    /// twice its size (Array's own growth allows as much).
    static let spareHandOver = Message.maximumBodySize / 2

    static func makeSpareBody() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Message.maximumBodySize) { _, count in count = Message.maximumBodySize }
    }
    /// The most packets one read-ahead queues (`PortTransport.readAhead`).
    static let readAheadLimit = 32
    /// Read-aheads in a row that found nothing (0–6), and pumps left to skip.
    var readAheadMisses = 0
    var readAheadSkip = 0

    deinit {
        packet.deallocate()
        control.deallocate()
        events.deallocate()
    }
}
