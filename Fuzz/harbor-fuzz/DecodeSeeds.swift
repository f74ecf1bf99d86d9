// Harbor fuzzing — the `decode` target's seeds: packets Harbor's own
// encoder writes (real rights of real ports, moved receive rights with
// queues and requests, sealed and copied regions), and the packets it
// writes by hand (wait, fragment, memory-file wrapper), each as
// `[arrived descriptors] [mode] packet bytes…`. Made once, by `--seed`:
// the descriptors they make are closed with their holdings.
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

enum DecodeSeeds {
    static func make() -> [[UInt8]] {
        let holdings = Holdings()
        var seeds: [[UInt8]] = []
        let queued = MessageSpec(id: 3, bodyLength: 2, rights: [.send, .sendOnce], regions: [RegionSpec(copied: false, size: 1)])
        let moved = PortSpec(queued: [queued, MessageSpec(id: 4, counted: false)], noSenders: true, portDestroyed: true)
        let nested = PortSpec(queued: [MessageSpec(id: 5, rights: [.receive(PortSpec(queued: [MessageSpec(id: 6)]))])])
        let specs = [
            MessageSpec(id: 1, bodyLength: 5),
            MessageSpec(id: 2, bodyLength: 3, counted: false),
            MessageSpec(id: 7, bodyLength: 4, reply: .sendOnce, rights: [.send]),
            MessageSpec(id: 8, reply: .send, rights: [.taken, .sendOnce]),
            MessageSpec(id: 9, regions: [RegionSpec(copied: false, size: 4096), RegionSpec(copied: false, size: 0)]),
            MessageSpec(id: 10, reply: .sendOnce, regions: [RegionSpec(copied: true, size: 4097), RegionSpec(copied: false, size: 7)]),
            MessageSpec(id: 11, bodyLength: 1, rights: [.receive(moved)]),
            MessageSpec(id: 12, rights: [.receive(nested), .send]),
        ]
        var encoded: [(bytes: [UInt8], descriptors: Int)] = []
        for spec in specs {
            guard let content = Builder(holdings: holdings).content(spec, depth: 0) else { continue }
            var encoder = WireEncoder(export: PortCore.export)
            guard let packet = try? encoder.encode(content) else { continue }
            var head = packet.head
            encoder.patch(&head, descriptorCount: encoder.descriptors.count)
            holdings.descriptors += encoder.descriptors
            holdings.objects += encoder.fragmentRegions
            encoded.append((head + content.body + packet.tail, encoder.descriptors.count))
        }
        // A send right its sender vouches for (flag `vouched`, as harbord
        // writes them): no port of this process stands behind it.
        if let vouched = vouchedSendRight(holdings) { encoded.append(vouched) }
        for (bytes, descriptors) in encoded {
            seeds.append([UInt8(truncatingIfNeeded: descriptors), 0] + bytes)
        }
        // The same packets in a memory file: the wrapper, then the file's contents.
        for (bytes, descriptors) in encoded.prefix(4) {
            let flags = WireFormat.Flags([.inMemoryFile, .countsAgainstLimit]).rawValue
            let outer = Packets.header(kind: .message, flags: flags, bodyLength: 0, entries: 0,
                                       descriptors: descriptors + 1, total: WireHeader.size)
            seeds.append([UInt8(truncatingIfNeeded: descriptors + 1), 1] + outer + bytes)
        }
        let wait = Packets.header(kind: .wait, flags: 0, bodyLength: 0, entries: 0, descriptors: 1, total: WireHeader.size)
        seeds.append([1, 0] + wait)
        seeds.append([0, 0] + Packets.fragment(data: 9, byte: 0xA5))
        seeds.append([0, 0])
        withExtendedLifetime(holdings) {}
        return seeds
    }

    /// A message carrying one vouched send right: a fresh connection and
    /// counter, the counter's own file as the vouch.
    private static func vouchedSendRight(_ holdings: Holdings) -> (bytes: [UInt8], descriptors: Int)? {
        guard let (_, sending) = try? SeqPacketSocket.makePair(), let counter = try? SharedSlots(free: 2),
              let file = try? FileKey(of: counter.descriptor.rawValue), let vouch = SlotCounterVouch(file) else { return nil }
        let right = ExportedRight(kind: .send, identity: PortIdentity(origin: 0x5eed, number: 1),
                                  descriptors: [sending, counter.descriptor], vouch: vouch)
        var encoder = WireEncoder(export: { _ throws(PortError) in right })
        let content = MessageContent(id: 13, body: [], rights: [.taken], trailer: MessageTrailer(sender: .current))
        guard var (head, tail) = try? encoder.encode(content) else { return nil }
        encoder.patch(&head, descriptorCount: encoder.descriptors.count)
        holdings.descriptors += encoder.descriptors
        holdings.objects.append(counter)
        return (head + tail, encoder.descriptors.count)
    }
}
