// Harbor — a message's fields as the runtime stores and queues them.

/// The copyable storage behind a ``Message``. Queues, errors and the wire
/// codec work with this; users see the `~Copyable` ``Message``. Copying it
/// shares the right tokens, never duplicates a right: only one copy is ever
/// handed back to a user.
///
/// Why the attachments sit in a box: most messages carry an id and bytes
/// only, and every copy of this struct retains (and later releases) each
/// reference it holds. Rights, the reply right and regions live in one
/// copy-on-write box that is nil for a plain message, so a plain message
/// costs one reference (its body) wherever it travels.
package struct MessageContent: Sendable {
    package var id: Int32
    package var body: [UInt8]
    package var trailer: MessageTrailer
    /// False for messages sent to a send-once right: they never count
    /// against the queue limit (Mach).
    package var countsAgainstLimit: Bool = true
    /// Nil while the message carries no rights, reply right or regions.
    private var attachments: Attachments?

    package init(id: Int32, body: [UInt8], rights: [CarriedRight] = [], reply: CarriedRight? = nil,
                 trailer: MessageTrailer, countsAgainstLimit: Bool = true) {
        self.id = id
        self.body = body
        self.trailer = trailer
        self.countsAgainstLimit = countsAgainstLimit
        if !rights.isEmpty || reply != nil {
            attachments = Attachments(rights: rights, reply: reply, regions: [])
        }
    }

    /// The rights carried in the message, in order.
    package var rights: [CarriedRight] {
        get { attachments?.rights ?? [] }
        _modify {
            makeAttachmentsUnique()
            yield &attachments!.rights
        }
    }

    /// The reply right (Mach's `msgh_local_port`).
    package var reply: CarriedRight? {
        get { attachments?.reply }
        _modify {
            makeAttachmentsUnique()
            yield &attachments!.reply
        }
    }

    /// Out-of-line regions: sealed memfds, mapped read-only (P08), or
    /// private memory that crossed in fragments.
    package var regions: [MappedRegion] {
        get { attachments?.regions ?? [] }
        _modify {
            makeAttachmentsUnique()
            yield &attachments!.regions
        }
    }

    /// True when the message is an id and bytes only.
    package var hasAttachments: Bool { attachments != nil }

    private mutating func makeAttachmentsUnique() {
        if attachments == nil {
            attachments = Attachments(rights: [], reply: nil, regions: [])
        } else if !isKnownUniquelyReferenced(&attachments!) {
            attachments = attachments!.copy()
        }
    }
}

/// A message's rights, reply right and regions: written only through a
/// `MessageContent` that holds the sole reference (copy on write).
// @unchecked: mutated only after `isKnownUniquelyReferenced`, so no two
// threads ever see one box change; shared boxes are read-only.
private final class Attachments: @unchecked Sendable {
    var rights: [CarriedRight]
    var reply: CarriedRight?
    var regions: [MappedRegion]

    init(rights: [CarriedRight], reply: CarriedRight?, regions: [MappedRegion]) {
        self.rights = rights
        self.reply = reply
        self.regions = regions
    }

    func copy() -> Attachments { Attachments(rights: rights, reply: reply, regions: regions) }
}
