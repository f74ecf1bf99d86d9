// Harbor fuzzing — the hostile peer: runs a program's steps against the
// port under test over two real connections.
//
// Messages are built by Harbor's own encoder from real rights of real
// ports (so valid transfers, nested queues, regions and fragments are
// reached), then damaged as the step says and written raw with
// `sendmsg`: the receiver's whole inbound path (pump, decoder, rights'
// import, reassembly) sees them exactly as it would from another process.
import CHarborLinux
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

final class Peer {
    let receiver: PortCore
    let holdings: Holdings
    /// The sending ends of two connections to the receiver (nil once closed).
    private(set) var connections: [SharedDescriptor?]
    /// Packets written since the receiver last pumped.
    var unread = 0
    /// Reads what has arrived (the receiver's side), when a socket is full.
    var pump: () -> Void = {}

    init(receiver: PortCore, holdings: Holdings) throws {
        self.receiver = receiver
        self.holdings = holdings
        let transport = try receiver.ensureTransport()
        connections = [try transport.makeConnection(WireFormat.ConnectionKind.send), try transport.makeConnection(WireFormat.ConnectionKind.send)]
    }

    func close(_ index: Int) { connections[index % 2] = nil }

    /// Writes one packet with `descriptors` on connection `index` (the other
    /// if that one is closed), pumping the receiver while the socket is full.
    func send(_ bytes: [UInt8], _ descriptors: [CInt], on index: Int) {
        guard let socket = connections[index % 2] ?? connections[(index + 1) % 2] else { return }
        for _ in 0..<4 {
            let sent = bytes.withUnsafeBytes { raw in
                try? SeqPacketSocket.send(socket.rawValue, parts: [raw], descriptors: descriptors)
            }
            switch sent {
            case true?:
                unread += 1
                return
            case false?: pump()  // full: let the receiver read
            case nil: return     // refused by the kernel (too large, too many descriptors)
            }
        }
    }

    func run(_ step: Step) {
        switch step {
        case .message(let spec, let delivery): deliver(spec, delivery)
        case .raw(let bytes, let decoys, let connection):
            let descriptors = decoys.compactMap { Decoys.make($0, receiver: receiver, holdings: holdings)?.rawValue }
            send(bytes, descriptors, on: connection)
        case .wait(let decoy, let connection):
            var header = Packets.header(kind: .wait, flags: 0, bodyLength: 0, entries: 0, descriptors: 1, total: 24)
            let descriptor = Decoys.make(decoy, receiver: receiver, holdings: holdings)
            if descriptor == nil { header[14] = 0 }
            send(header, descriptor.map { [$0.rawValue] } ?? [], on: connection)
        case .strayFragment(let length, let corruption, let connection):
            var packet = Packets.fragment(data: length, byte: corruption)
            if corruption & 0x80 != 0, !packet.isEmpty { packet[Int(corruption) % min(24, packet.count)] ^= corruption | 1 }
            send(packet, [], on: connection)
        case .pump: pump()
        case .close(let connection): close(connection)
        }
    }

    // MARK: Messages

    private func deliver(_ spec: MessageSpec, _ delivery: Delivery) {
        guard let content = Builder(holdings: holdings).content(spec, depth: 0) else { return }
        var encoder = WireEncoder(export: PortCore.export)
        guard let encoded = try? encoder.encode(content) else { return }
        var head = encoded.head
        let tail = encoded.tail
        encoder.patch(&head, descriptorCount: encoder.descriptors.count)
        holdings.descriptors += encoder.descriptors
        let regions = encoder.fragmentRegions
        holdings.objects += regions
        let bodyEnd = head.count + content.body.count
        var bytes = head + content.body + tail
        let sections = [0..<24, 24..<head.count, head.count..<bodyEnd, bodyEnd..<bytes.count, 0..<bytes.count]
        for edit in delivery.edits { Packets.apply(edit, to: &bytes, sections: sections) }
        var descriptors = encoder.descriptors.map { $0.rawValue }
        for edit in delivery.descriptorEdits { apply(edit, to: &descriptors) }
        if !delivery.keepDeclaredCount && bytes.count >= 16 && !delivery.descriptorEdits.isEmpty {
            bytes[14] = UInt8(truncatingIfNeeded: descriptors.count)
            bytes[15] = UInt8(truncatingIfNeeded: descriptors.count >> 8)
        }
        let tooLarge = bytes.count > WireFormat.maximumInlinePacket || descriptors.count >= SeqPacketSocket.maximumDescriptors
        if delivery.memoryFile != 0 || tooLarge {
            let variant = MemoryFileVariant(rawValue: Int(delivery.memoryFile) - 1) ?? .intact
            sendInMemoryFile(bytes, descriptors, variant, on: delivery.connection)
        } else {
            send(bytes, descriptors, on: delivery.connection)
        }
        if !regions.isEmpty { sendFragments(regions, delivery) }
    }

    private func apply(_ edit: DescriptorEdit, to descriptors: inout [CInt]) {
        let decoy = { Decoys.make(edit.decoy, receiver: self.receiver, holdings: self.holdings)?.rawValue }
        guard !descriptors.isEmpty else {
            if edit.operation >= 3, let extra = decoy() { descriptors.append(extra) }
            return
        }
        let index = Int(edit.index) % descriptors.count
        switch edit.operation {
        case 0: descriptors.remove(at: index)
        case 1: descriptors.insert(descriptors[index], at: index)
        case 2: descriptors.swapAt(index, (index + 1) % descriptors.count)
        case 3: if let extra = decoy() { descriptors[index] = extra }
        default: if let extra = decoy() { descriptors.insert(extra, at: index) }
        }
    }

    /// The packet in a memfd, as a sender does for large packets, damaged as `variant` says.
    private func sendInMemoryFile(_ packet: [UInt8], _ descriptors: [CInt], _ variant: MemoryFileVariant, on connection: Int) {
        let all = charbor_F_SEAL_WRITE | charbor_F_SEAL_SHRINK | charbor_F_SEAL_GROW | charbor_F_SEAL_SEAL
        let seals: CInt = switch variant {
        case .missingWrite: all & ~charbor_F_SEAL_WRITE | charbor_F_SEAL_FUTURE_WRITE
        case .missingShrink: all & ~charbor_F_SEAL_SHRINK
        case .missingGrow: all & ~charbor_F_SEAL_GROW
        case .missingSeal: all & ~charbor_F_SEAL_SEAL
        default: all
        }
        var contents = packet
        switch variant {
        case .extraBytes: contents += [UInt8](repeating: 0, count: 5)
        case .empty: contents = []
        default: break
        }
        let file = variant == .notAFile
            ? try? SharedDescriptor.makeEventDescriptor()
            : Decoys.memoryFile(size: contents.count, seals: seals, fill: 0, contents: contents)
        guard let file = file.map(holdings.keep) else { return }
        let declared = variant == .countWithoutFile ? descriptors.count : descriptors.count + 1
        var header = Packets.header(kind: .message, flags: WireFormat.Flags.inMemoryFile.rawValue, bodyLength: 0,
                                    entries: 0, descriptors: declared, total: 24)
        if variant == .headerWithBody {
            header += [1, 2, 3, 4]
            header[8] = 4
            header[20] = 28
        }
        send(header, [file.rawValue] + descriptors, on: connection)
    }

    /// The copied regions' bytes in fragment packets, damaged as the edits say.
    private func sendFragments(_ regions: [MappedRegion], _ delivery: Delivery) {
        var chunk = WireFormat.maximumFragmentData
        for edit in delivery.fragmentEdits where edit.operation == 7 {
            chunk = Int(edit.value) % WireFormat.maximumFragmentData + 1
        }
        let total = regions.reduce(0) { $0 + $1.count }
        let data = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            for region in regions where region.count > 0 {
                memcpy(buffer.baseAddress! + initialized, region.bytes.baseAddress!, region.count)
                initialized += region.count
            }
        }
        // At most 64 fragments: a 1-byte chunk of 300 KB is a run of its own.
        chunk = max(chunk, (data.count + 63) / 64)
        var packets: [(bytes: [UInt8], descriptors: [CInt], connection: Int, before: Bool)] = []
        var offset = 0
        while offset < data.count {
            let count = min(chunk, data.count - offset)
            packets.append((Packets.fragment(data[offset..<(offset + count)]), [], delivery.connection, false))
            offset += count
        }
        for edit in delivery.fragmentEdits where edit.operation != 7 && !packets.isEmpty {
            let index = Int(edit.index) % packets.count
            switch edit.operation {
            case 0: packets.remove(at: index)
            case 1: packets.insert(packets[index], at: index)
            case 2:
                let change = Int(edit.value % 64) - 32
                let length = max(0, packets[index].bytes.count - 24 + change)
                packets[index].bytes = Packets.fragment(data: length, byte: UInt8(truncatingIfNeeded: edit.value))
            case 3:
                let at = Int(edit.value) % 24
                packets[index].bytes[at] ^= UInt8(truncatingIfNeeded: edit.value >> 8) | 1
            case 4:
                if let extra = Decoys.make(Decoy(kind: UInt8(truncatingIfNeeded: edit.value), size: 1),
                                           receiver: receiver, holdings: holdings) {
                    packets[index].descriptors.append(extra.rawValue)
                }
            case 5: packets[index].before = true
            default: packets[index].connection += 1
            }
        }
        for packet in packets {
            if packet.before { send(Packets.plain(id: 5, body: [9]), [], on: packet.connection) }
            send(packet.bytes, packet.descriptors, on: packet.connection)
        }
    }
}

/// How a memory-file packet is damaged.
enum MemoryFileVariant: Int, CaseIterable {
    case intact, missingWrite, missingShrink, missingGrow, missingSeal, extraBytes, empty, notAFile
    case countWithoutFile, headerWithBody
}
