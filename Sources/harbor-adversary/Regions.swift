// harbor-adversary — P12: out-of-line regions, too many and too large.
import Glibc

enum Regions {
    /// `regions`: `--count` (20) messages with 17 sealed regions (one more
    /// than a message may carry), then `--count` messages with 16 sealed
    /// sparse regions of 4 GiB each (64 GiB of address space per message).
    static func attack(_ target: Target, _ options: Options, _ report: Report) {
        let count = options.count ?? 20
        var tooMany = 0, huge = 0
        for _ in 0..<count {
            let files = (0..<17).map { _ in Traps.sealedRegion(4096) }
            if send(files, to: target) == .sent { tooMany += 1 }
            for file in files { close(file) }
        }
        for _ in 0..<count {
            let files = (0..<16).map { _ in Traps.sealedRegion(4 << 30) }
            if send(files, to: target) == .sent { huge += 1 }
            for file in files { close(file) }
        }
        report.set("tooManySent", tooMany)
        report.set("hugeSent", huge)
        report.set("servedAfter", Protocol.ping(target).inbound != nil)
    }

    private static func send(_ files: [CInt], to target: Target) -> SendOutcome {
        var packet = Packet(flags: Wire.Flag.counted, id: Protocol.unknown)
        packet.entries = files.indices.map { Entry.memory(first: $0) }
        packet.declaredDescriptors = files.count
        return target.send(packet, descriptors: files)
    }
}
