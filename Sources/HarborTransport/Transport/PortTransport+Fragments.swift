// Harbor — a port's transport, receiving: fragmented messages reassembled.
//
// Docs/WireFormat.md, "Fragmented messages". Called by the packet reader
// (PortTransport+Packet.swift) under the pump lock.
import HarborSystem
import HarborPorts

extension PortTransport {

    /// A packet received scattered into `target`: if it is the awaited
    /// fragment (from the assembly's sender, no descriptors, a valid fragment
    /// header whose data all landed in `target`), records it and returns
    /// progress (or the whole message); a malformed fragment from that
    /// sender refuses the message; any other packet is the caller's.
    enum Direct: ~Copyable {
        case other, refused, progress
        case complete(MessageContent)
    }

    static func directFragment(
        _ packet: ReceivedPacket, _ buffer: UnsafeMutableRawBufferPointer, _ target: UnsafeMutableRawBufferPointer,
        assemblies list: inout [FragmentAssembly]?
    ) -> Direct {
        guard buffer[1] == WireFormat.Kind.fragment.rawValue, let sender = packet.sender,
              !packet.wasTruncated, !packet.controlWasTruncated, packet.descriptorCount == 0,
              var assemblies = list, assemblies.count == 1, assemblies[0].sender.pid == sender.pid,
              packet.byteCount - WireFormat.headerSize <= target.count else { return .other }
        // Check the header as parseFragment would, with the data elsewhere.
        let header = UnsafeRawBufferPointer(rebasing: buffer[0..<WireHeader.size])
        let data = packet.byteCount - WireHeader.size
        guard let fragment = try? WireHeader.decode(header, validating: packet.byteCount),
              fragment.isFragment, fragment.bodyLength == data else {
            list = nil
            WireRejections.record(.badFragment)
            return .refused
        }
        assemblies[0].advance(by: data)
        if assemblies[0].isComplete { return .complete(assemblies[0].finish()) }
        list = assemblies
        return .progress
    }

    /// Begins reassembling a fragmented message on one connection. A new
    /// message from a sender whose previous one is unfinished replaces it
    /// (that sender gave up on it); a connection holds at most
    /// `PeerLimits.assembliesPerConnection`, and makes room only by dropping
    /// those of senders that have died. What the regions declare is charged
    /// to the connection and to the sender's uid (PeerLimits); past either
    /// limit the message is refused (`overLimit`), its regions never filled.
    static func start(_ assembly: FragmentAssembly, in list: inout [FragmentAssembly]) throws(WireRejection) {
        var assembly = assembly
        if let stale = list.firstIndex(where: { $0.sender.pid == assembly.sender.pid }) {
            list.remove(at: stale)
            WireRejections.record(.badFragment)
        }
        if list.count >= PeerLimits.assembliesPerConnection {
            list.removeAll { !ProcessControl.exists($0.sender.pid) }
        }
        guard list.count < PeerLimits.assembliesPerConnection else {
            throw WireRejection(.badFragment, "\(list.count) fragmented messages already in progress")
        }
        let onConnection = list.reduce(0) { $0 + $1.declaredBytes }
        guard assembly.declaredBytes <= PeerLimits.partialBytesPerConnection - onConnection else {
            throw WireRejection(.overLimit, "\(assembly.declaredBytes) bytes declared with \(onConnection) in progress "
                                + "on the connection")
        }
        try assembly.takeCharge()
        list.append(assembly)
    }

    /// Adds a fragment to its sender's message; returns the message once whole.
    static func add(
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
        var whole = list.remove(at: index)
        return whole.finish()
    }
}
