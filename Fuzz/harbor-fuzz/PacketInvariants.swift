// Harbor fuzzing — what a packet `WirePacket.parse` accepted promises.
//
// The importer (`InboundPacket.materialize`) trusts the parse: it claims
// descriptors by index, slices the body by range, allocates copied regions
// of the declared sizes. So an accepted packet must have: every arrived
// descriptor owned by exactly one right, request, connection or region
// (nested queues included), and none past the end; each right the number
// of descriptors its kind has; a body inside the bytes and within the
// limit; at most the rights, regions, nesting and copied bytes the limits
// allow (PeerLimits); a reply of a kind that can answer, present exactly
// when the flag says so; moved rights only with the transfers flag and
// counters a receiver can add one to; the continued flag exactly when
// copied regions follow.
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

struct PacketInvariants {
    private let bytes: UnsafeRawBufferPointer
    /// How many times each arrived descriptor is owned.
    private var owners: [Int]

    /// Checks `packet`, parsed from `bytes` with `arrived` descriptors
    /// (`header` its decoded header); stops the run on the first breach.
    static func check(_ packet: WirePacket, _ bytes: UnsafeRawBufferPointer, arrived: Int, header: WireHeader) {
        var invariants = PacketInvariants(bytes: bytes, owners: [Int](repeating: 0, count: arrived))
        if packet.kind == .wait {
            guard header.isWait, arrived == 1, packet.rights.isEmpty, packet.reply == nil, packet.regions.isEmpty,
                  packet.body.isEmpty else { fail("decode: a wait packet that is not one: \(header)") }
            return
        }
        guard packet.kind == .message, packet.id == header.id, packet.flags == header.flags,
              packet.body.count == header.bodyLength else {
            fail("decode: the packet disagrees with its header: \(packet.kind) \(packet.body) vs \(header)")
        }
        invariants.walk(packet, depth: 0, topLevel: true)
        if let index = invariants.owners.firstIndex(where: { $0 != 1 }) {
            fail("decode: descriptor \(index) of \(arrived) is owned \(invariants.owners[index]) times")
        }
    }

    private mutating func walk(_ packet: WirePacket, depth: Int, topLevel: Bool) {
        guard packet.kind == .message, WireFormat.Flags.known.isSuperset(of: packet.flags),
              !packet.flags.contains(.inMemoryFile) else {
            fail("decode: a \(packet.kind) with flags \(packet.flags.rawValue) at depth \(depth)")
        }
        guard packet.body.lowerBound >= WireHeader.size, packet.body.upperBound <= bytes.count,
              packet.body.count <= Message.maximumBodySize else {
            fail("decode: body \(packet.body) of \(bytes.count) bytes")
        }
        guard packet.rights.count <= Message.maximumCarriedRights else {
            fail("decode: \(packet.rights.count) rights, over the limit of \(Message.maximumCarriedRights)")
        }
        guard (packet.reply != nil) == packet.flags.contains(.hasReply) else {
            fail("decode: reply \(String(describing: packet.reply?.kind)), flags \(packet.flags.rawValue)")
        }
        guard (packet.relayedSender != nil) == !topLevel else {
            fail("decode: a relayed sender at depth \(depth)")
        }
        for right in packet.rights { claim(right, packet.flags, depth: depth) }
        if let reply = packet.reply {
            guard reply.kind == .send || reply.kind == .sendOnce else { fail("decode: a \(reply.kind) reply") }
            claim(reply, packet.flags, depth: depth)
        }
        guard packet.regions.count <= Message.maximumRegions else {
            fail("decode: \(packet.regions.count) regions, over the limit of \(Message.maximumRegions)")
        }
        guard packet.files.count <= Message.maximumCarriedFiles else {
            fail("decode: \(packet.files.count) files, over the limit of \(Message.maximumCarriedFiles)")
        }
        for index in packet.files { own(index) }
        var copied = 0
        for region in packet.regions {
            switch region {
            case .file(let index): own(index)
            case .copied(let count):
                guard topLevel, count > 0, count <= WireFormat.maximumFragmentedPayload - copied else {
                    fail("decode: a copied region of \(count) bytes after \(copied), at depth \(depth)")
                }
                copied += count
            }
        }
        guard (copied > 0) == packet.flags.contains(.continued) else {
            fail("decode: \(copied) copied bytes, flags \(packet.flags.rawValue)")
        }
    }

    private mutating func claim(_ right: WireRight, _ flags: WireFormat.Flags, depth: Int) {
        let count: Int = switch right.kind {
        case .send: 2
        case .sendOnce, .receive: 1
        case .taken: 0
        case .memory, .copiedRegion: fail("decode: a region left among the rights")
        case .file: fail("decode: a file left among the rights")
        }
        guard right.descriptorCount == count else {
            fail("decode: a \(right.kind) right with \(right.descriptorCount) descriptors")
        }
        for index in 0..<count { own(right.firstDescriptor + index) }
        if right.vouch != nil && right.kind != .send { fail("decode: a \(right.kind) right with a vouch") }
        guard right.kind == .receive else {
            if right.transfer != nil { fail("decode: a \(right.kind) right with a transfer record") }
            return
        }
        guard let transfer = right.transfer, flags.contains(.transfers), depth < WireFormat.maximumNesting else {
            fail("decode: a receive right without its transfer, its flag, or at depth \(depth)")
        }
        guard transfer.queueLimit <= PortStateMachine.maximumQueueLimit,
              transfer.sequenceNumber <= WireFormat.maximumCounter,
              transfer.madeSendRights <= WireFormat.maximumCounter,
              transfer.requests.count <= 2,
              Set(transfer.requests.map(\.kind.rawValue)).count == transfer.requests.count else {
            fail("decode: transfer limit \(transfer.queueLimit), sequence \(transfer.sequenceNumber), "
                 + "made \(transfer.madeSendRights), \(transfer.requests.count) requests")
        }
        for connection in transfer.connections { own(connection.descriptor) }
        for request in transfer.requests { own(request.descriptor) }
        for queued in transfer.queued { walk(queued, depth: depth + 1, topLevel: false) }
    }

    private mutating func own(_ index: Int) {
        guard index >= 0, index < owners.count else {
            fail("decode: descriptor index \(index) of \(owners.count)")
        }
        owners[index] += 1
    }
}
