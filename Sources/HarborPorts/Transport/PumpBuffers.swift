// Harbor — the pump's reusable buffers (PortTransport+Pump.swift).
import CHarborLinux
import Glibc

/// The pump's reusable buffers: one packet, its control data, epoll events.
struct PumpBuffers: ~Copyable {
    let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: WireFormat.maximumInlinePacket + 4096, alignment: 16)
    let control = UnsafeMutableRawBufferPointer.allocate(byteCount: SeqPacketSocket.controlCapacity, alignment: 16)
    let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 32)
    /// Fragmented messages being reassembled, by connection token.
    var assemblies: [UInt64: [FragmentAssembly]] = [:]
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
    /// The most packets one read-ahead queues (`PortTransport.readAhead`).
    static let readAheadLimit = 32
    /// Read-aheads in a row that found nothing (0–6), and pumps left to skip.
    var readAheadMisses = 0
    var readAheadSkip = 0

    deinit {
        packet.deallocate()
        control.deallocate()
        events.deallocate()
    }
}
