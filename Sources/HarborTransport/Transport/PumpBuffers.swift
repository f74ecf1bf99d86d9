// Harbor — the pump's reusable buffers (PortTransport+Pump.swift).
import HarborSystem
import HarborPorts

/// The pump's reusable buffers: one packet, its control data, epoll events.
struct PumpBuffers: ~Copyable {
    let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: WireFormat.maximumInlinePacket + 4096, alignment: 16)
    let control = UnsafeMutableRawBufferPointer.allocate(byteCount: SeqPacketSocket.controlCapacity, alignment: 16)
    let events = UnsafeMutableBufferPointer<EpollEvent>.allocate(capacity: 32)
    /// Fragmented messages being reassembled, by connection token.
    var assemblies = Assemblies()
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
    /// The most packets that are not messages (wait packets, fragments,
    /// refused packets) one pump reads on from a connection after the one
    /// that woke it (`PortTransport.process`).
    static let nonMessageLimit = 64
    /// The most packets one read-ahead queues (`PortTransport.readAhead`).
    static let readAheadLimit = 32
    /// Read-aheads in a row that found nothing (0–6), and pumps left to skip.
    var readAheadMisses = 0
    var readAheadSkip = 0
    /// Direct reads in a row that found nothing (0–6), and pumps left that
    /// ask the set first (`PortTransport.readLastConnection`).
    var directMisses = 0
    var directSkip = 0
    /// The connection the set named alone when last asked (nil: none, or
    /// more than one event), and the direct reads of it since.
    var namedAlone: UInt64?
    var guesses = 0
    /// The most direct reads in a row of a connection the set named alone,
    /// on a port with others, before the set is asked again: how many
    /// messages a connection that became readable meanwhile waits at most.
    static let guessLimit = 8

    deinit {
        packet.deallocate()
        control.deallocate()
        events.deallocate()
    }
}

/// Fragmented messages being reassembled, by connection token, kept so that
/// the shared slot count stays exact (P12): a counted message's sender took
/// a slot for it, and the message leaves here either whole, as a message
/// the queue then accounts for, or with its slot given back. Every change
/// goes through ``change(_:arriving:returningSlotsTo:_:)`` or
/// ``drop(_:returningSlotsTo:)``, which count the counted messages before
/// and after and give back the difference, so no path that loses an
/// unfinished message (a refused fragment, a message replaced or over a
/// limit, a closed connection, a port shut down) can forget its slot.
struct Assemblies: ~Copyable {
    private var lists: [UInt64: [FragmentAssembly]] = [:]

    var isEmpty: Bool { lists.isEmpty }

    /// The messages in progress on connection `token`.
    subscript(token: UInt64) -> [FragmentAssembly]? { lists[token] }

    /// Changes the list of connection `token` through `body`, which returns
    /// what the packet was. `arriving` is true when a counted message's
    /// first packet comes with this change (its slot is then held here, or
    /// given back if `body` does not keep it). Slots of counted messages
    /// that left other than as the returned message go back to `slots`.
    mutating func change(
        _ token: UInt64, arriving: Bool = false, returningSlotsTo slots: SharedSlots.Counter,
        _ body: (inout [FragmentAssembly]?) -> PortTransport.Received
    ) -> PortTransport.Received {
        var list = lists.removeValue(forKey: token)
        let before = Self.counted(list) + (arriving ? 1 : 0)
        let received = body(&list)
        if let kept = list, !kept.isEmpty { lists[token] = kept }
        let leftWhole = received.isCountedMessage ? 1 : 0
        let lost = before - Self.counted(list) - leftWhole
        guard lost > 0 else { return received }
        slots.release(Int32(lost))
        // One pattern per case (see `PortTransport.receiveOne`).
        switch consume received {
        case .nothing: return .refused(gaveSlotBack: true)
        case .closed: return .closed
        case .assembling: return .refused(gaveSlotBack: true)
        case .refused: return .refused(gaveSlotBack: true)
        case .message(let content): return .message(content)
        case .waiter(let eventfd): return .waiter(eventfd)
        }
    }

    /// Forgets the messages in progress on connection `token` (it closed),
    /// giving their slots back; true if any was counted.
    mutating func drop(_ token: UInt64, returningSlotsTo slots: SharedSlots.Counter) -> Bool {
        guard let list = lists.removeValue(forKey: token) else { return false }
        let lost = Self.counted(list)
        if lost > 0 { slots.release(Int32(lost)) }
        return lost > 0
    }

    /// Forgets every message in progress (the port is shut down: it moves,
    /// and the counter with it, or dies), giving their slots back.
    mutating func removeAll(returningSlotsTo slots: SharedSlots.Counter) {
        for token in Array(lists.keys) { _ = drop(token, returningSlotsTo: slots) }
    }

    private static func counted(_ list: [FragmentAssembly]?) -> Int {
        guard let list else { return 0 }
        var count = 0
        for assembly in list where assembly.content.countsAgainstLimit { count += 1 }
        return count
    }
}
