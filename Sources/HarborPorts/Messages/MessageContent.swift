// Harbor — a message's fields as the runtime stores and queues them.
import HarborSystem

/// The copyable storage behind a ``Message``. Queues, errors and the wire
/// codec work with this; users see the `~Copyable` ``Message``. Copying it
/// shares the right tokens, never duplicates a right: only one copy is ever
/// handed back to a user.
///
/// Why three words: a message passes through a dozen functions between a
/// socket and its receiver. As an 80-odd-byte struct it was passed by
/// address, and the optimizer kept whole copies of it along the way
/// (`outlined init with copy` / `outlined destroy`), each a retain and a
/// release of every buffer it held: on a cross-process round trip that was
/// about a third of Harbor's own cycles. Now the id, the body and one
/// reference travel in registers. The reference is a copy-on-write box of
/// everything else (trailer, rights, reply right, regions), and it is nil
/// for a plain message this process sends: such a message costs no
/// allocation beyond its body, which is the usual cross-process send.
@usableFromInline
package struct MessageContent: Sendable {
    @usableFromInline package var id: Int32
    /// False for messages sent to a send-once right: they never count
    /// against the queue limit (Mach).
    @usableFromInline package var countsAgainstLimit: Bool
    @usableFromInline package var body: [UInt8]
    /// Nil means: no rights, no reply right, no regions, and the trailer of
    /// a message this process sends (`MessageTrailer(sender: .current)`).
    @usableFromInline var extra: Extra?

    /// A message this process sends: no box until something needs one.
    package init(id: Int32, body: [UInt8]) {
        self.id = id
        self.body = body
        countsAgainstLimit = true
        extra = nil
    }

    @inlinable
    package init(id: Int32, body: [UInt8], rights: [CarriedRight] = [], reply: CarriedRight? = nil,
                 trailer: MessageTrailer, countsAgainstLimit: Bool = true) {
        self.id = id
        self.body = body
        self.countsAgainstLimit = countsAgainstLimit
        extra = Extra(trailer: trailer, rights: rights, reply: reply, regions: [], files: [])
    }

    package var trailer: MessageTrailer {
        get { extra?.trailer ?? MessageTrailer(sender: .current) }
        _modify { yield &boxed().trailer }
    }

    /// The trailer's sender, read in place (the trailer is not copied).
    package var sender: ProcessIdentity { extra?.trailer.sender ?? .current }

    /// Whether the trailer marks a notification, read in place.
    package var isNotification: Bool { extra?.trailer.isNotification ?? false }

    /// The rights carried in the message, in order.
    package var rights: [CarriedRight] {
        @inlinable @inline(__always) get { extra?.rights ?? [] }
        _modify { yield &boxed().rights }
    }

    /// The reply right (Mach's `msgh_local_port`).
    package var reply: CarriedRight? {
        @inlinable @inline(__always) get { extra?.reply }
        _modify { yield &boxed().reply }
    }

    /// Out-of-line regions: sealed memfds, mapped read-only (P08), or
    /// private memory that crossed in fragments.
    package var regions: [MappedRegion] {
        @inlinable @inline(__always) get { extra?.regions ?? [] }
        _modify { yield &boxed().regions }
    }

    /// Carried file descriptors (Message+Files.swift), in order; nil once
    /// taken out, so indices do not move. The message owns each one still
    /// here and closes it when the last copy of the message goes.
    package var files: [CarriedFile?] {
        @inlinable @inline(__always) get { extra?.files ?? [] }
        _modify { yield &boxed().files }
    }

    /// Whether the message has nothing but an id and a body (its trailer
    /// aside): no rights, no reply right, no regions, no files. Costs no allocation.
    @inlinable @inline(__always)
    package var isPlain: Bool {
        guard let extra else { return true }
        return extra.rights.isEmpty && extra.regions.isEmpty && extra.reply == nil && extra.files.isEmpty
    }

    /// Stamps what the receiving port says of a message it hands out (one
    /// trip through the box, not one per field).
    package mutating func stampReceipt(sequenceNumber: UInt64, port: PortName) {
        let box = boxed()
        box.trailer.sequenceNumber = sequenceNumber
        box.trailer.port = port
    }

    /// Stamps the trailer of a message this process is about to send.
    package mutating func stampSender() {
        // Without a box the trailer already says so; don't make one for it,
        // nor rewrite a box's that says so already (the box this process made
        // for a message of its own, such as a reply carrying a right).
        guard extra != nil, extra?.trailer.isUnstampedOwn != true else { return }
        boxed().trailer = MessageTrailer(sender: .current)
    }

    /// Adds `right` after the carried rights. A message with no box yet
    /// (the usual first right of a message this process builds) gets one
    /// made with the right already in its array, not an empty array grown.
    package mutating func attach(_ right: CarriedRight) {
        if extra == nil {
            extra = Self.ownBox(rights: [right])
        } else {
            boxed().rights.append(right)
        }
    }

    /// The box, made if absent, copied first if another `MessageContent`
    /// shares it.
    private mutating func boxed() -> Extra {
        // Uniqueness first: binding the box to a name would hold a second
        // reference, and every write would copy it.
        if !isKnownUniquelyReferenced(&extra) {
            extra = extra?.copy() ?? Self.ownBox()
        }
        return extra.unsafelyUnwrapped
    }

    /// A new box for a message this process sends: its own trailer, `rights`.
    private static func ownBox(rights: [CarriedRight] = []) -> Extra {
        Extra(trailer: MessageTrailer(sender: .current), rights: rights, reply: nil, regions: [], files: [])
    }
}

/// A message's fields beyond id and body: written only through a
/// `MessageContent` that holds the sole reference (copy on write).
// @unchecked: mutated only after `isKnownUniquelyReferenced`, so no two
// threads ever see one box change; shared boxes are read-only.
// @exclusivity(unchecked): the only accesses are through `MessageContent`,
// whose own (static) exclusivity covers the box it uniquely holds; the
// runtime checks cost two calls and a thread-local lookup per access.
// @usableFromInline: MessageContent's inlinable accessors read it.
@usableFromInline final class Extra: @unchecked Sendable {  // @unchecked: see above

    @usableFromInline @exclusivity(unchecked) var trailer: MessageTrailer
    @usableFromInline @exclusivity(unchecked) var rights: [CarriedRight]
    @usableFromInline @exclusivity(unchecked) var reply: CarriedRight?
    @usableFromInline @exclusivity(unchecked) var regions: [MappedRegion]
    @usableFromInline @exclusivity(unchecked) var files: [CarriedFile?]

    @usableFromInline
    init(trailer: MessageTrailer, rights: [CarriedRight], reply: CarriedRight?, regions: [MappedRegion],
         files: [CarriedFile?]) {
        self.trailer = trailer
        self.rights = rights
        self.reply = reply
        self.regions = regions
        self.files = files
    }

    func copy() -> Extra { Extra(trailer: trailer, rights: rights, reply: reply, regions: regions, files: files) }
}
