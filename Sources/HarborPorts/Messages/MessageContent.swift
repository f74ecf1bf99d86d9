// Harbor — a message's fields as the runtime stores and queues them.

/// The copyable storage behind a ``Message``. Queues, errors and the wire
/// codec work with this; users see the `~Copyable` ``Message``. Copying it
/// shares the right tokens, never duplicates a right: only one copy is ever
/// handed back to a user.
///
/// Why every field sits in one copy-on-write box: a message passes through
/// a dozen functions between a socket and its receiver. As an 80-odd-byte
/// struct it was passed by address, and the optimizer kept whole copies of
/// it along the way (`outlined init with copy` / `outlined destroy`), each a
/// retain and a release of every buffer it held: on a cross-process round
/// trip that was about a third of Harbor's own cycles. As one reference it
/// travels in a register, a copy is one retain, and most copies are not
/// made at all. The box costs one allocation per message.
package struct MessageContent: Sendable {
    private var storage: Storage

    package init(id: Int32, body: [UInt8], rights: [CarriedRight] = [], reply: CarriedRight? = nil,
                 trailer: MessageTrailer, countsAgainstLimit: Bool = true) {
        storage = Storage(id: id, body: body, trailer: trailer, countsAgainstLimit: countsAgainstLimit,
                          rights: rights, reply: reply, regions: [])
    }

    package var id: Int32 {
        get { storage.id }
        set { unique().id = newValue }
    }

    package var body: [UInt8] {
        get { storage.body }
        _modify { yield &unique().body }
    }

    package var trailer: MessageTrailer {
        get { storage.trailer }
        _modify { yield &unique().trailer }
    }

    /// False for messages sent to a send-once right: they never count
    /// against the queue limit (Mach).
    package var countsAgainstLimit: Bool {
        get { storage.countsAgainstLimit }
        set { unique().countsAgainstLimit = newValue }
    }

    /// The rights carried in the message, in order.
    package var rights: [CarriedRight] {
        get { storage.rights }
        _modify { yield &unique().rights }
    }

    /// The reply right (Mach's `msgh_local_port`).
    package var reply: CarriedRight? {
        get { storage.reply }
        _modify { yield &unique().reply }
    }

    /// Out-of-line regions: sealed memfds, mapped read-only (P08), or
    /// private memory that crossed in fragments.
    package var regions: [MappedRegion] {
        get { storage.regions }
        _modify { yield &unique().regions }
    }

    /// The box, copied first if another `MessageContent` shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }
}

/// A message's fields: written only through a `MessageContent` that holds
/// the sole reference (copy on write).
// @unchecked: mutated only after `isKnownUniquelyReferenced`, so no two
// threads ever see one box change; shared boxes are read-only.
// @exclusivity(unchecked): the only accesses are through `MessageContent`,
// whose own (static) exclusivity covers the box it uniquely holds; the
// runtime checks cost two calls and a thread-local lookup per access.
private final class Storage: @unchecked Sendable {
    @exclusivity(unchecked) var id: Int32
    @exclusivity(unchecked) var countsAgainstLimit: Bool
    @exclusivity(unchecked) var body: [UInt8]
    @exclusivity(unchecked) var trailer: MessageTrailer
    @exclusivity(unchecked) var rights: [CarriedRight]
    @exclusivity(unchecked) var reply: CarriedRight?
    @exclusivity(unchecked) var regions: [MappedRegion]

    init(id: Int32, body: [UInt8], trailer: MessageTrailer, countsAgainstLimit: Bool,
         rights: [CarriedRight], reply: CarriedRight?, regions: [MappedRegion]) {
        self.id = id
        self.body = body
        self.trailer = trailer
        self.countsAgainstLimit = countsAgainstLimit
        self.rights = rights
        self.reply = reply
        self.regions = regions
    }

    func copy() -> Storage {
        Storage(id: id, body: body, trailer: trailer, countsAgainstLimit: countsAgainstLimit,
                rights: rights, reply: reply, regions: regions)
    }
}
