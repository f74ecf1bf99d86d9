// Harbor — the sending side of a connection to a port in another process.
import SystemPackage
import HarborSystem
import Synchronization
import HarborPorts

/// Sends to a port whose receive right lives in another process.
///
/// One per proxy port; its socket may be shared with other processes that
/// hold the same send right (the kernel counts them all). Counted messages
/// take a slot of the port's shared counter before they leave, so the queue
/// limit holds across processes exactly as within one.
///
/// **Thread safety:** any thread; a SEQPACKET send is atomic per packet.
package final class RemoteRoute: Sendable {
    package let socket: SharedDescriptor
    /// The port's shared slot counter; nil for send-once connections and the
    /// bootstrap connection, whose messages never count.
    package let slots: SharedSlots?
    /// `slots`' counter, used on every send without touching the object.
    private let counter: SharedSlots.Counter?
    /// What the route learns after it is made, under one lock (one lock
    /// fewer to make and free with every proxy), made by the first need
    /// (``learning(_:)``): a proxy made and dropped unused, as a looked-up
    /// right often is, makes none. Released in `deinit`.
    private let learned = Atomic<Unmanaged<LearnedState>?>(nil)
    /// The process that made the connection, when the route's maker had
    /// already asked the kernel (an imported right): read with no lock.
    private let madeBy: ProcessIdentity?

    /// ``Learned`` under its lock, once the route has something to learn.
    private final class LearnedState: Sendable {
        let lock = HarborLock(Learned())
    }

    private struct Learned {
        /// The eventfd of its wait packets: made on the first wait for a slot, then reused.
        var waiter: SharedDescriptor? = nil
        /// The process that made the connection, once asked (``creator()``;
        /// a route made knowing it has it in `madeBy`).
        var madeBy: ProcessIdentity? = nil
        /// Held for the whole of a fragmented send (never by other sends):
        /// made by the route's first one (most routes never fragment, and
        /// a lock made and freed with every proxy costs both).
        var fragmenting: FragmentGate? = nil
    }

    /// The lock a fragmented send holds throughout.
    private final class FragmentGate: Sendable {
        let lock = HarborLock<Int>(0)
    }

    /// - Parameter creator: the process that made `socket`'s connection, if
    ///   the caller already asked the kernel (`SeqPacketSocket.creator`).
    package init(socket: SharedDescriptor, slots: SharedSlots?, creator: ProcessIdentity? = nil) {
        self.socket = socket
        self.slots = slots
        counter = slots?.counter
        madeBy = creator
    }

    deinit { learned.load(ordering: .acquiring)?.release() }

    /// Runs `body` on what the route learned, under its lock; makes the
    /// state on the first call (a race of two first calls keeps one).
    private func learning<Result>(_ body: (inout Learned) -> Result) -> Result {
        if let state = learned.load(ordering: .acquiring) {
            return state._withUnsafeGuaranteedRef { $0.lock.withLockedValue(body) }
        }
        let made = Unmanaged.passRetained(LearnedState())
        let (stored, current) = learned.compareExchange(expected: nil, desired: made, ordering: .acquiringAndReleasing)
        if !stored { made.release() }
        // Held by the route until its deinit: valid while `self` is.
        return (current ?? made)._withUnsafeGuaranteedRef { $0.lock.withLockedValue(body) }
    }

    /// The process that made the connection (`SO_PEERCRED`), asked of the
    /// kernel once: it is fixed when the connection is made, and the socket
    /// of a route never changes, so the answer holds for the route's life.
    package func creator() throws(SystemError) -> ProcessIdentity {
        if let madeBy { return madeBy }
        if let known = learning({ $0.madeBy }) { return known }
        let asked = try SeqPacketSocket.creator(socket.rawValue)
        learning { $0.madeBy = asked }
        return asked
    }

    /// Whether the receiving side is gone (every receiving end closed).
    package var hasHungUp: Bool {
        SeqPacketSocket.hasHungUp(socket.rawValue)
    }

    /// Sends `content`, waiting for a slot and for socket room until `deadline`.
    package func send(_ content: MessageContent, deadline: WaitDeadline, to port: PortCore?) throws(PortError) {
        let counted = content.countsAgainstLimit && counter != nil
        if counted, let counter, !counter.tryAcquire(), let slots {
            try waitForSlot(slots, deadline: deadline, content: content, port: port)
        }
        var journal: ExportJournal?
        do {
            if OutboundPacket.isPlain(content) {
                try transmitPlain(content, deadline: deadline)
            } else if let right = OutboundPacket.soleSendRight(content) {
                try transmitSoleSendRight(content, right, deadline: deadline)
            } else {
                // Only a send-once or receive right's export may need undoing (a
                // send right's changes nothing a failed send must give back).
                journal = Self.exportsUndoably(content) ? ExportJournal() : nil
                try transmit(content, deadline: deadline, journal: journal)
            }
        } catch {
            journal?.rollBack()
            if counted { counter?.release() }
            if error.code == .deadName { port?.remoteDied() }
            let name = port?.name.description ?? "the peer"
            throw PortError(error.code, "send to \(name): \(error.detail)", underlying: error.underlying,
                            returning: content)
        }
    }

    /// Whether `content` carries a right whose export `PortCore.export`
    /// can undo (a send-once or a receive right): only then is a journal
    /// made for the send.
    private static func exportsUndoably(_ content: MessageContent) -> Bool {
        func undoable(_ right: CarriedRight?) -> Bool {
            switch right {
            case .sendOnce?, .receive?: true
            default: false
            }
        }
        return undoable(content.reply) || content.rights.contains { undoable($0) }
    }

    /// Sends a plain message as one packet: its header on the stack, its
    /// body gathered from the message's own storage.
    private func transmitPlain(_ content: MessageContent, deadline: WaitDeadline) throws(PortError) {
        let header = OutboundPacket.plainHeader(content)
        let result = header.withUnsafeBytes { headerBytes in
            content.body.withUnsafeBytes { bodyBytes in
                Result { () throws(PortError) in
                    try sendPlainPacket(headerBytes, bodyBytes, deadline: deadline)
                }
            }
        }
        try result.get()
    }

    /// Sends a message carrying one send right and nothing else (a look-up's
    /// answer) as one packet: its header and entry on the stack, its body
    /// from the message's own storage, the right's two descriptors passed
    /// as they are. The bytes the encoder would produce, with none of its
    /// arrays (``OutboundPacket/soleSendRight(_:)``).
    private func transmitSoleSendRight(
        _ content: MessageContent, _ right: SendRightToken, deadline: WaitDeadline
    ) throws(PortError) {
        let (connection, slots, vouch) = try right.port.sendRightDescriptors()
        let head = OutboundPacket.soleSendRightHead(content, identity: right.port.identity, vouch: vouch)
        var descriptors = (connection.rawValue, slots.rawValue)
        let result = withUnsafeBytes(of: &descriptors) { rawDescriptors in
            head.withUnsafeBytes { headBytes in
                content.body.withUnsafeBytes { bodyBytes in
                    Result { () throws(PortError) in
                        try sendPlainPacket(headBytes, bodyBytes, descriptors: rawDescriptors.assumingMemoryBound(to: CInt.self),
                                            deadline: deadline)
                    }
                }
            }
        }
        withExtendedLifetime((connection, slots)) {}
        try result.get()
    }

    /// One `sendmsg` of header and body (and `descriptors`), with
    /// `sendPacket`'s waiting and errors.
    private func sendPlainPacket(
        _ header: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer,
        descriptors: UnsafeBufferPointer<CInt> = UnsafeBufferPointer(start: nil, count: 0), deadline: WaitDeadline
    ) throws(PortError) {
        while true {
            do {
                if try SeqPacketSocket.send(socket.rawValue, header, body, descriptors: descriptors) { return }
            } catch {
                throw Self.sendError(error)
            }
            try waitForRoom(deadline: deadline)
        }
    }

    private func transmit(_ content: MessageContent, deadline: WaitDeadline, journal: ExportJournal?) throws(PortError) {
        let packet = try OutboundPacket.encode(content, journal: journal)
        if packet.fragmentRegions.isEmpty {
            try transmitPacket(packet, body: content.body, deadline: deadline)
            return
        }
        // One process's fragments must not interleave with its own other
        // fragmented messages on the shared socket: the receiver reassembles
        // per sending process. Only fragmented sends take this lock.
        let fragmenting = learning { learned in
            if let made = learned.fragmenting { return made }
            let made = FragmentGate()
            learned.fragmenting = made
            return made
        }
        try fragmenting.lock.withLock { _ throws(PortError) in
            try transmitPacket(packet, body: content.body, deadline: deadline)
            try OutboundPacket.forEachFragment(of: packet.fragmentRegions) { (header, data) throws(PortError) in
                try sendPacket([header, data], descriptors: [], deadline: deadline)
            }
        }
    }

    private func transmitPacket(_ packet: OutboundPacket.Encoded, body: [UInt8], deadline: WaitDeadline) throws(PortError) {
        let descriptors = packet.descriptors
        if OutboundPacket.needsMemoryFile(packet) {
            let (header, file) = try OutboundPacket.inMemoryFile(packet, body: body)
            let raw = [file.rawValue] + descriptors.map(\.rawValue)
            let result = header.withUnsafeBytes { bytes in
                Result { () throws(PortError) in try sendPacket([bytes], descriptors: raw, deadline: deadline) }
            }
            withExtendedLifetime((file, descriptors)) {}
            try result.get()
            return
        }
        let result = packet.head.withUnsafeBytes { headBytes in
            body.withUnsafeBytes { bodyBytes in
                packet.tail.withUnsafeBytes { tailBytes in
                    Result { () throws(PortError) in
                        try sendEncoded(headBytes, bodyBytes, tailBytes, descriptors: descriptors, deadline: deadline)
                    }
                }
            }
        }
        withExtendedLifetime(descriptors) {}
        try result.get()
    }

    /// `sendPacket` for an encoded message's three parts: no arrays.
    private func sendEncoded(
        _ head: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer, _ tail: UnsafeRawBufferPointer,
        descriptors: [SharedDescriptor], deadline: WaitDeadline
    ) throws(PortError) {
        while true {
            do {
                if try SeqPacketSocket.send(socket.rawValue, head, body, tail, descriptors: descriptors) { return }
            } catch {
                throw Self.sendError(error)
            }
            try waitForRoom(deadline: deadline)
        }
    }

    /// One `sendmsg`, waiting for socket room (never for long: the slot is
    /// already ours) and turning a closed peer into a dead name.
    private func sendPacket(
        _ parts: [UnsafeRawBufferPointer], descriptors: [CInt], deadline: WaitDeadline
    ) throws(PortError) {
        while true {
            do {
                if try SeqPacketSocket.send(socket.rawValue, parts: parts, descriptors: descriptors) { return }
            } catch {
                throw Self.sendError(error)
            }
            try waitForRoom(deadline: deadline)
        }
    }

    private static func sendError(_ error: SystemError) -> PortError {
        if error.isPeerGone { return PortError(.deadName, "its receive right is gone", underlying: error) }
        if error.isMessageTooLarge {
            return PortError(.messageTooLarge, "the packet is over the socket's limit", underlying: error)
        }
        return PortError(error, "sendmsg")
    }

    /// The socket buffer was full: waits for room, hang-up or the deadline.
    private func waitForRoom(deadline: WaitDeadline) throws(PortError) {
        let ready = SeqPacketSocket.waitForRoom(socket.rawValue, forRoom: true, orReadable: nil, deadline: deadline)
        if ready.hungUp { throw PortError(.deadName, "its receive right is gone") }
        if !ready.writable && !ready.otherReadable && deadline.hasPassed {
            if case .immediately = deadline { throw PortError(.queueFull, "the connection's buffer is full") }
            throw PortError(.timedOut, "the connection's buffer stayed full")
        }
    }

    /// Registers with the receiver and sleeps until a slot frees (or the
    /// receiver grants one), the receiver dies or the deadline passes.
    ///
    /// The wait packet is sent again on a timer (1 ms, doubling to 64 ms):
    /// the shared counter and the wake-ups are hints a hostile sender can
    /// spoil (a counter written "full", a registration displaced by another
    /// process on a shared connection), and each new wait packet makes the
    /// receiver look again with its own count, granting a slot when it has
    /// room (PortTransport+BackPressure.swift). A grant comes through the
    /// eventfd, which only this process and the receiver hold.
    private func waitForSlot(
        _ slots: SharedSlots, deadline: WaitDeadline, content: MessageContent, port: PortCore?
    ) throws(PortError) {
        let name = port?.name.description ?? "the peer"
        if hasHungUp {
            port?.remoteDied()
            throw PortError(.deadName, "send to \(name), whose receive right is gone", returning: content)
        }
        if case .immediately = deadline {
            throw PortError(.queueFull, "\(name) is at its queue limit", returning: content)
        }
        let eventfd: SharedDescriptor
        do { eventfd = try waiterDescriptor() } catch { throw PortError(error, "waiting for room in \(name)") }
        slots.addWaiter(1)
        defer { slots.addWaiter(-1) }
        var registered = false
        var pause = Self.firstLook
        while true {
            if !registered { registered = (try? sendWaitPacket(eventfd)) ?? false }
            if slots.tryAcquire() { return }
            let look = Self.earlier(deadline, pause)
            let ready = SeqPacketSocket.waitForRoom(socket.rawValue, forRoom: !registered, orReadable: eventfd.rawValue,
                                                    deadline: look)
            if ready.hungUp {
                port?.remoteDied()
                throw PortError(.deadName, "send to \(name), whose receive right is gone", returning: content)
            }
            if ready.otherReadable {
                // Non-blocking (the receiver set O_NONBLOCK on it too): another
                // thread of this process may have read it first.
                if let value = DescriptorIO.drainCounter(eventfd.rawValue), value >= SharedSlots.grant { return }
                registered = false  // the receiver used our registration up
            } else if !ready.writable && !deadline.hasPassed {
                registered = false  // the timer: register again, so the receiver looks again
                pause = min(pause * 2, Self.lastLook)
            }
            if !ready.writable && !ready.otherReadable && deadline.hasPassed {
                if slots.tryAcquire() { return }
                throw PortError(.timedOut, "\(name) stayed at its queue limit", returning: content)
            }
        }
    }

    /// How long a waiting sender first sleeps before it registers again,
    /// and the most it ever sleeps between registrations.
    private static let firstLook = Duration.milliseconds(1)
    private static let lastLook = Duration.milliseconds(64)

    /// `deadline`, or `timeout` from now if that comes first.
    private static func earlier(_ deadline: WaitDeadline, _ timeout: Duration) -> WaitDeadline {
        let timer = WaitDeadline(timeout: timeout)
        switch (deadline, timer) {
        case (.at(let end), .at(let tick)): return tick < end ? timer : deadline
        case (.never, _): return timer
        default: return deadline
        }
    }

    private func waiterDescriptor() throws(SystemError) -> SharedDescriptor {
        if let existing = learning({ $0.waiter }) { return existing }
        let shared = try SharedDescriptor.makeEventDescriptor()
        return learning { learned in
            if let current = learned.waiter { return current }
            learned.waiter = shared
            return shared
        }
    }

    private func sendWaitPacket(_ eventfd: SharedDescriptor) throws(SystemError) -> Bool {
        try OutboundPacket.waitHeader.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in
                try SeqPacketSocket.send(socket.rawValue, parts: [bytes], descriptors: [eventfd.rawValue])
            }
        }.get()
    }
}

extension RemoteRoute: PortRoute {
    package func requestDeadName(of port: PortCore, notifying target: SendOnceToken) {
        port.requestRemoteDeadName(target, route: self)
    }

    package func cancelDeathWatches(_ tokens: [UInt64]) {
        for token in tokens { RemoteDeathWatch.shared.remove(token) }
    }
}
