// Harbor — what a port tap records of each message its port admits (Docs/Capture.md).
import HarborSystem

/// One message as a ``PortTap`` saw it join its port's queue: when, what it
/// carried (sizes and kinds, never the rights or descriptors themselves),
/// who the kernel says sent it, and how deep the queue was after it.
///
/// A record copies at most the first ``bodyPrefix`` bytes of the body (the
/// tap's `bodyPrefix` limit); ``bodySize`` is the whole body's size.
public struct PortCaptureRecord: Hashable, Sendable {
    /// The admission's number on this tap, from 1: every message the port
    /// admitted while the tap was armed has one, recorded or dropped, so a
    /// gap between two records' numbers is the messages dropped between them.
    public var index: UInt64
    /// The tapped port.
    public var port: PortName
    /// When the port admitted the message: `CLOCK_MONOTONIC`, in nanoseconds.
    public var monotonicNanoseconds: Int64
    /// The same instant on the wall clock (`CLOCK_REALTIME`), in nanoseconds
    /// since 1970-01-01 00:00 UTC: the time a capture file shows.
    public var wallNanoseconds: Int64
    /// The message id.
    public var id: Int32
    /// The body's size in bytes.
    public var bodySize: Int
    /// The body's first bytes: at most the tap's `bodyPrefix`.
    public var bodyPrefix: [UInt8]
    /// Send rights carried in the message (not counting the reply right).
    public var sendRights: Int
    /// Send-once rights carried in the message (not counting the reply right).
    public var sendOnceRights: Int
    /// Receive rights carried in the message.
    public var receiveRights: Int
    /// The reply right's kind (``CarriedRightKind/send`` or
    /// ``CarriedRightKind/sendOnce``), nil without one.
    public var replyRight: CarriedRightKind?
    /// File descriptors carried in the message (their number only).
    public var files: Int
    /// The size in bytes of each out-of-line region, in order.
    public var regionSizes: [Int]
    /// The trailer's sender: the kernel-verified process the message is
    /// held against (``MessageTrailer/sender``).
    public var sender: ProcessIdentity
    /// The relay that delivered the message inside a moved receive right
    /// (``MessageTrailer/relayedBy``), nil when its sender delivered it.
    public var relayedBy: ProcessIdentity?
    /// Who the relay says sent it (``MessageTrailer/claimedOriginalSender``): a claim.
    public var claimedOriginalSender: ProcessIdentity?
    /// A notification the runtime generated (no-senders, dead-name, …).
    public var isNotification: Bool
    /// False for a message sent to a send-once right (it does not count
    /// against the queue limit).
    public var countsAgainstLimit: Bool
    /// Messages in the queue just after this one was admitted, this one
    /// included; 0 when it went straight to a receiver waiting for it.
    public var queueDepth: Int
    /// Records the tap dropped (its buffer full) since the record before
    /// this one: the admissions between the two records' ``index``.
    public var droppedBefore: UInt64

    /// Makes a record; a ``PortTap`` makes them as its port admits
    /// messages, and capture readers (tests, tools) make them from files.
    public init(
        index: UInt64, port: PortName, monotonicNanoseconds: Int64, wallNanoseconds: Int64, id: Int32,
        bodySize: Int, bodyPrefix: [UInt8], sendRights: Int = 0, sendOnceRights: Int = 0, receiveRights: Int = 0,
        replyRight: CarriedRightKind? = nil, files: Int = 0, regionSizes: [Int] = [], sender: ProcessIdentity,
        relayedBy: ProcessIdentity? = nil, claimedOriginalSender: ProcessIdentity? = nil,
        isNotification: Bool = false, countsAgainstLimit: Bool = true, queueDepth: Int, droppedBefore: UInt64 = 0
    ) {
        self.index = index
        self.port = port
        self.monotonicNanoseconds = monotonicNanoseconds
        self.wallNanoseconds = wallNanoseconds
        self.id = id
        self.bodySize = bodySize
        self.bodyPrefix = bodyPrefix
        self.sendRights = sendRights
        self.sendOnceRights = sendOnceRights
        self.receiveRights = receiveRights
        self.replyRight = replyRight
        self.files = files
        self.regionSizes = regionSizes
        self.sender = sender
        self.relayedBy = relayedBy
        self.claimedOriginalSender = claimedOriginalSender
        self.isNotification = isNotification
        self.countsAgainstLimit = countsAgainstLimit
        self.queueDepth = queueDepth
        self.droppedBefore = droppedBefore
    }

    /// The record of `content`, admitted to `port` with `depth` messages
    /// then queued: counts and sizes read, nothing retained but the prefix.
    package init(_ content: MessageContent, port: PortName, depth: Int, index: UInt64, prefix: Int,
                 droppedBefore: UInt64) {
        var send = 0, sendOnce = 0, receive = 0
        var regionSizes: [Int] = []
        var files = 0
        let trailer = content.trailer
        var reply: CarriedRightKind?
        if !content.isPlain {
            for right in content.rights {
                switch right.kind {
                case .send: send += 1
                case .sendOnce: sendOnce += 1
                case .receive: receive += 1
                case .taken: break
                }
            }
            reply = content.reply?.kind
            let regions = content.regions
            if !regions.isEmpty {
                regionSizes.reserveCapacity(regions.count)
                for region in regions { regionSizes.append(region.count) }
            }
            for file in content.files where file != nil { files += 1 }
        }
        let body = content.body
        self.init(
            index: index, port: port, monotonicNanoseconds: MonotonicInstant.now.nanoseconds,
            wallNanoseconds: WallClock.nanosecondsSinceEpoch, id: content.id, bodySize: body.count,
            bodyPrefix: body.count <= prefix ? body : Array(body[0..<prefix]),
            sendRights: send, sendOnceRights: sendOnce, receiveRights: receive, replyRight: reply, files: files,
            regionSizes: regionSizes, sender: trailer.sender, relayedBy: trailer.relayedBy,
            claimedOriginalSender: trailer.claimedOriginalSender, isNotification: trailer.isNotification,
            countsAgainstLimit: content.countsAgainstLimit, queueDepth: depth, droppedBefore: droppedBefore)
    }
}
