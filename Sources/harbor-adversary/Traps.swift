// harbor-adversary — P12: packets shaped to reach a trap in the receiver's
// parser. The first is the 56-byte packet from issue 13; the others are
// its relatives (a reply flag whose only entries are regions).
import CHarborLinux
import Glibc

enum Traps {
    /// The packets, each with the descriptors it carries.
    static func packets() -> [(name: String, packet: Packet, descriptors: [CInt])] {
        var result: [(String, Packet, [CInt])] = []
        // hasReply|continued, one copied region of 1 byte, no descriptors: 56 bytes.
        var crash = Packet(flags: Wire.Flag.hasReply | Wire.Flag.continued, id: 1)
        crash.entries = [.copied(1)]
        result.append(("copied-reply", crash, []))
        // Two copied regions and the reply flag.
        var two = crash
        two.entries = [.copied(1), .copied(2)]
        result.append(("two-copied-reply", two, []))
        // The reply flag and one sealed memfd region (kind 5), nothing else.
        let region = sealedRegion(4096)
        var memory = Packet(flags: Wire.Flag.hasReply, id: 1)
        memory.entries = [.memory(first: 0)]
        memory.declaredDescriptors = 1
        result.append(("memory-reply", memory, [region]))
        // A counted version of the first, then one with the transfers flag.
        var counted = crash
        counted.flags |= Wire.Flag.counted
        result.append(("copied-reply-counted", counted, []))
        var transfers = crash
        transfers.flags |= Wire.Flag.transfers
        result.append(("copied-reply-transfers", transfers, []))
        // A region of length 0 and one of 2^63.
        var empty = crash
        empty.entries = [.copied(0)]
        result.append(("copied-empty", empty, []))
        var huge = Packet(flags: Wire.Flag.continued, id: 1)
        huge.entries = [.copied(1 << 63)]
        result.append(("copied-huge", huge, []))
        // A taken entry as the reply right, and a receive entry without its transfer.
        var taken = Packet(flags: Wire.Flag.hasReply, id: 1)
        taken.entries = [Entry(kind: Wire.EntryKind.taken.rawValue, descriptorCount: 0, first: 0,
                               identity: Identity(origin: 0, number: 0))]
        result.append(("taken-reply", taken, []))
        var bareReceive = Packet(flags: Wire.Flag.transfers, id: 1)
        bareReceive.entries = [Entry(kind: Wire.EntryKind.receive.rawValue, descriptorCount: 1, first: 0,
                                     identity: Identity.fresh())]
        bareReceive.declaredDescriptors = 1
        result.append(("receive-without-transfer", bareReceive, [ownSlotCounter()]))
        // A fragment with no message in progress.
        var fragment = Packet(kind: Wire.Kind.fragment.rawValue, body: [1, 2, 3])
        fragment.declaredDescriptors = 0
        result.append(("stray-fragment", fragment, []))
        return result
    }

    /// A sealed memfd of `size` bytes, as an honest region would be.
    static func sealedRegion(_ size: Int) -> CInt {
        let fd = RawIO.memoryFile(size: size, seals: 0)
        _ = fcntl(fd, charbor_F_ADD_SEALS,
                  charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL)
        return fd
    }

    /// `crash`: every trap packet, repeated `--count` times (default 1), with
    /// a check after each that the victim still answers.
    static func crash(_ target: Target, _ options: Options, _ report: Report) {
        var sent = 0
        var failedAfter: [String] = []
        let all = packets()
        for (name, packet, descriptors) in all {
            for _ in 0..<(options.count ?? 1) {
                if target.send(packet, descriptors: descriptors) == .sent { sent += 1 }
            }
            for descriptor in descriptors { close(descriptor) }
            if Protocol.ping(target).inbound == nil { failedAfter.append(name) }
        }
        report.set("sent", sent)
        report.set("kinds", all.count)
        report.set("unansweredAfter", failedAfter.isEmpty ? "none" : failedAfter.joined(separator: ","))
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }
}
