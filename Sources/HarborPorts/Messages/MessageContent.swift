// Harbor — a message's fields as the runtime stores and queues them.

/// The copyable storage behind a ``Message``. Queues, errors and (later) the
/// wire codec work with this; users see the `~Copyable` ``Message``. Copying
/// it shares the right tokens, never duplicates a right: only one copy is
/// ever handed back to a user.
package struct MessageContent: Sendable {
    package var id: Int32
    package var body: [UInt8]
    package var rights: [CarriedRight]
    package var reply: CarriedRight?
    package var trailer: MessageTrailer
    /// Out-of-line regions: sealed memfds, mapped read-only (P08).
    package var regions: [MappedRegion] = []
    /// False for messages sent to a send-once right: they never count
    /// against the queue limit (Mach).
    package var countsAgainstLimit: Bool = true

    package init(id: Int32, body: [UInt8], rights: [CarriedRight] = [], reply: CarriedRight? = nil,
                 trailer: MessageTrailer) {
        self.id = id
        self.body = body
        self.rights = rights
        self.reply = reply
        self.trailer = trailer
    }
}
