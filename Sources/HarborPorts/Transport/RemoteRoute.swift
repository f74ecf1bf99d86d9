// Harbor — the sending side of a connection to a port in another process.
import CHarborLinux
import Glibc
import Synchronization
import SystemPackage

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
    /// Created on the first wait for a slot, then reused.
    private let waiter = Mutex<SharedDescriptor?>(nil)
    /// Held for the whole of a fragmented send (never by other sends).
    private let fragmenting = Mutex<Int>(0)

    package init(socket: SharedDescriptor, slots: SharedSlots?) {
        self.socket = socket
        self.slots = slots
        counter = slots?.counter
    }

    /// Whether the receiving side is gone (every receiving end closed).
    package var hasHungUp: Bool {
        SeqPacketSocket.pollNow(socket.rawValue, events: Int16(POLLOUT)) & Int16(POLLHUP | POLLERR) != 0
    }

    /// Sends `content`, waiting for a slot and for socket room until `deadline`.
    package func send(_ content: MessageContent, deadline: WaitDeadline, to port: PortCore?) throws(PortError) {
        let counted = content.countsAgainstLimit && counter != nil
        if counted, let counter, !counter.tryAcquire(), let slots {
            try waitForSlot(slots, deadline: deadline, content: content, port: port)
        }
        // Only a message carrying rights exports anything that may need undoing.
        let journal = content.rights.isEmpty && content.reply == nil ? nil : ExportJournal()
        do {
            if Self.isPlain(content) {
                try transmitPlain(content, deadline: deadline)
            } else {
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

    /// A message with nothing but an id and an inline body: no entries, no
    /// descriptors, no fragments. Most messages are; they skip the encoder.
    /// (A reply right already taken out carries nothing either.)
    private static func isPlain(_ content: MessageContent) -> Bool {
        guard content.body.count <= Message.maximumBodySize else { return false }
        if content.isPlain { return true }
        return content.rights.isEmpty && content.regions.isEmpty && content.reply?.kind == .taken
    }

    /// Sends a plain message as one packet: its 24-byte header built on the
    /// stack and the body gathered from the message's own storage (the same
    /// bytes `WireEncoder` would produce, without its arrays).
    private func transmitPlain(_ content: MessageContent, deadline: WaitDeadline) throws(PortError) {
        var header = PlainHeader(id: content.id, bodyCount: content.body.count,
                                 counted: content.countsAgainstLimit)
        let result = withUnsafeBytes(of: &header) { headerBytes in
            content.body.withUnsafeBytes { bodyBytes in
                Result { () throws(PortError) in
                    try sendPlainPacket(headerBytes, bodyBytes, deadline: deadline)
                }
            }
        }
        try result.get()
    }

    /// One `sendmsg` of header and body, with `sendPacket`'s waiting and errors.
    private func sendPlainPacket(
        _ header: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer, deadline: WaitDeadline
    ) throws(PortError) {
        while true {
            do {
                if try SeqPacketSocket.send(socket.rawValue, header, body) { return }
            } catch {
                throw Self.sendError(error)
            }
            try waitForRoom(deadline: deadline)
        }
    }

    private func transmit(_ content: MessageContent, deadline: WaitDeadline, journal: ExportJournal?) throws(PortError) {
        var encoder = if let journal {
            WireEncoder { (right) throws(PortError) in try journal.export(right) }
        } else {
            WireEncoder(export: PortCore.export)
        }
        let (head, tail) = try encoder.encode(content)
        let fragments = encoder.fragmentRegions
        if fragments.isEmpty {
            try transmitPacket(head: head, tail: tail, content: content, encoder: encoder, deadline: deadline)
            return
        }
        // One process's fragments must not interleave with its own other
        // fragmented messages on the shared socket: the receiver reassembles
        // per sending process. Only fragmented sends take this lock.
        try fragmenting.withLock { _ throws(PortError) in
            try transmitPacket(head: head, tail: tail, content: content, encoder: encoder, deadline: deadline)
            try transmitFragments(fragments, deadline: deadline)
        }
    }

    /// Sends the copied regions' bytes after their message, in packets of at
    /// most `WireFormat.maximumFragmentData` bytes, straight from the regions.
    private func transmitFragments(_ regions: [MappedRegion], deadline: WaitDeadline) throws(PortError) {
        var header = [UInt8](repeating: 0, count: WireFormat.headerSize)
        header[0] = WireFormat.version
        header[1] = WireFormat.Kind.fragment.rawValue
        for region in regions {
            let bytes = region.bytes
            var offset = 0
            while offset < bytes.count {
                let count = min(WireFormat.maximumFragmentData, bytes.count - offset)
                header.withUnsafeMutableBytes { raw in
                    raw.storeBytes(of: UInt32(count).littleEndian, toByteOffset: 8, as: UInt32.self)
                    raw.storeBytes(of: UInt32(count + WireFormat.headerSize).littleEndian, toByteOffset: 20,
                                   as: UInt32.self)
                }
                let result = header.withUnsafeBytes { headerBytes in
                    Result { () throws(PortError) in
                        try sendPacket([headerBytes, UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])],
                                       descriptors: [], deadline: deadline)
                    }
                }
                try result.get()
                offset += count
            }
        }
        withExtendedLifetime(regions) {}
    }

    private func transmitPacket(
        head: [UInt8], tail: [UInt8], content: MessageContent, encoder: WireEncoder, deadline: WaitDeadline
    ) throws(PortError) {
        var head = head
        let descriptors = encoder.descriptors
        let total = head.count + content.body.count + tail.count
        if total > WireFormat.maximumInlinePacket || descriptors.count >= SeqPacketSocket.maximumDescriptors {
            try transmitInMemoryFile(head: head, body: content.body, tail: tail, descriptors: descriptors,
                                     deadline: deadline)
            return
        }
        encoder.patch(&head, descriptorCount: descriptors.count)
        let raw = descriptors.map(\.rawValue)
        let result = head.withUnsafeBytes { headBytes in
            content.body.withUnsafeBytes { bodyBytes in
                tail.withUnsafeBytes { tailBytes in
                    Result { () throws(PortError) in
                        try sendPacket([headBytes, bodyBytes, tailBytes], descriptors: raw, deadline: deadline)
                    }
                }
            }
        }
        withExtendedLifetime(descriptors) {}
        try result.get()
    }

    private func transmitInMemoryFile(
        head: [UInt8], body: [UInt8], tail: [UInt8], descriptors: [SharedDescriptor], deadline: WaitDeadline
    ) throws(PortError) {
        guard descriptors.count < SeqPacketSocket.maximumDescriptors else {
            throw PortError(.messageTooLarge, "\(descriptors.count) descriptors is over the kernel's 253")
        }
        var inner = head
        inner[14] = UInt8(truncatingIfNeeded: descriptors.count)
        inner[15] = UInt8(truncatingIfNeeded: descriptors.count >> 8)
        let file: SharedDescriptor
        do {
            file = try MemoryFile.create(name: "harbor-packet")
            try MemoryFile.writeAll(file.rawValue, [inner, body, tail])
            try MemoryFile.addSeals(file.rawValue, charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK
                                    | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
        } catch {
            throw PortError(error, "writing a large packet to a memory file")
        }
        var header = ByteWriter(capacity: WireFormat.headerSize)
        header.append(WireFormat.version)
        header.append(WireFormat.Kind.message.rawValue)
        // The inner packet's "counts" flag repeated outside: a receiver that
        // loses the memory file (MSG_CTRUNC) still knows to give its slot back.
        header.append(WireFormat.Flags.inMemoryFile.rawValue
                      | UInt16(head[2]) & WireFormat.Flags.countsAgainstLimit.rawValue)
        header.append(Int32(0))
        header.append(UInt32(0))
        header.append(UInt16(0))
        header.append(UInt16(descriptors.count + 1))
        header.append(UInt32(0))
        header.append(UInt32(WireFormat.headerSize))
        let raw = [file.rawValue] + descriptors.map(\.rawValue)
        let result = header.bytes.withUnsafeBytes { bytes in
            Result { () throws(PortError) in try sendPacket([bytes], descriptors: raw, deadline: deadline) }
        }
        withExtendedLifetime((file, descriptors)) {}
        try result.get()
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
        switch error.errno.rawValue {
        case EPIPE, ECONNRESET, ENOTCONN:
            PortError(.deadName, "its receive right is gone", underlying: error)
        case EMSGSIZE:
            PortError(.messageTooLarge, "the packet is over the socket's limit", underlying: error)
        default:
            PortError(error, "sendmsg")
        }
    }

    /// The socket buffer was full: waits for room, hang-up or the deadline.
    private func waitForRoom(deadline: WaitDeadline) throws(PortError) {
        let ready = waitFor(events: Int16(POLLOUT), extra: nil, deadline: deadline)
        if ready.hungUp { throw PortError(.deadName, "its receive right is gone") }
        if !ready.socket && !ready.extra && deadline.hasPassed {
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
            let ready = waitFor(events: registered ? 0 : Int16(POLLOUT), extra: eventfd.rawValue, deadline: look)
            if ready.hungUp {
                port?.remoteDied()
                throw PortError(.deadName, "send to \(name), whose receive right is gone", returning: content)
            }
            if ready.extra {
                var value: UInt64 = 0
                // Non-blocking (the receiver set O_NONBLOCK on it too): another
                // thread of this process may have read it first.
                if Glibc.read(eventfd.rawValue, &value, 8) == 8, value >= SharedSlots.grant { return }
                registered = false  // the receiver used our registration up
            } else if !ready.socket && !deadline.hasPassed {
                registered = false  // the timer: register again, so the receiver looks again
                pause = min(pause * 2, Self.lastLook)
            }
            if !ready.socket && !ready.extra && deadline.hasPassed {
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
        if let existing = waiter.withLock({ $0 }) { return existing }
        let shared = try SharedDescriptor.makeEventDescriptor()
        return waiter.withLock { current in
            if let current { return current }
            current = shared
            return shared
        }
    }

    private func sendWaitPacket(_ eventfd: SharedDescriptor) throws(SystemError) -> Bool {
        var header = ByteWriter(capacity: WireFormat.headerSize)
        header.append(WireFormat.version)
        header.append(WireFormat.Kind.wait.rawValue)
        header.append(UInt16(0))
        header.append(Int32(0))
        header.append(UInt32(0))
        header.append(UInt16(0))
        header.append(UInt16(1))
        header.append(UInt32(0))
        header.append(UInt32(WireFormat.headerSize))
        return try header.bytes.withUnsafeBytes { bytes in
            Result { () throws(SystemError) in
                try SeqPacketSocket.send(socket.rawValue, parts: [bytes], descriptors: [eventfd.rawValue])
            }
        }.get()
    }

    private func waitFor(events: Int16, extra: CInt?, deadline: WaitDeadline) -> (socket: Bool, extra: Bool, hungUp: Bool) {
        var entries = [pollfd(fd: socket.rawValue, events: events, revents: 0)]
        if let extra { entries.append(pollfd(fd: extra, events: Int16(POLLIN), revents: 0)) }
        let result: CInt
        if var spec = deadline.remaining() {
            result = charbor_ppoll(&entries, nfds_t(entries.count), &spec)
        } else {
            result = charbor_ppoll(&entries, nfds_t(entries.count), nil)
        }
        guard result > 0 else { return (false, false, false) }
        let hungUp = entries[0].revents & Int16(POLLHUP | POLLERR) != 0
        return (entries[0].revents & events != 0, entries.count > 1 && entries[1].revents != 0, hungUp)
    }
}

/// The 24-byte header of a plain message (WireFormat.md): version, kind,
/// flags, id, body length, no entries, no descriptors, no nested section,
/// total length. Stored byte by byte offsets, little-endian, on the stack.
private struct PlainHeader {
    private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

    init(id: Int32, bodyCount: Int, counted: Bool) {
        let flags = counted ? WireFormat.Flags.countsAgainstLimit.rawValue : 0
        withUnsafeMutableBytes(of: &words) { raw in
            raw.storeBytes(of: WireFormat.version, toByteOffset: 0, as: UInt8.self)
            raw.storeBytes(of: WireFormat.Kind.message.rawValue, toByteOffset: 1, as: UInt8.self)
            raw.storeBytes(of: flags.littleEndian, toByteOffset: 2, as: UInt16.self)
            raw.storeBytes(of: id.littleEndian, toByteOffset: 4, as: Int32.self)
            raw.storeBytes(of: UInt32(bodyCount).littleEndian, toByteOffset: 8, as: UInt32.self)
            // Entry count, descriptor count and nested length stay zero.
            raw.storeBytes(of: UInt32(WireFormat.headerSize + bodyCount).littleEndian, toByteOffset: 20,
                           as: UInt32.self)
        }
    }
}

extension PortCore {
    /// The connection a proxy sends through (nil for a port received here).
    /// For tests and test helpers that misbehave on purpose (harbor-peer).
    package var remoteRoute: RemoteRoute? { state.withLock { $0.route } }
}
