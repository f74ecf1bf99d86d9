// Harbor — what reading a port's connections did, for a receiver deciding
// whether to wait again.

/// What a pump (``PortConnections/pump(into:deadline:takeFirst:)``) did.
/// `~Copyable`, like the other wrappers a message passes through on its way
/// to a receiver: moved, never copied.
@usableFromInline
package struct PumpOutcome: ~Copyable, Sendable {
    /// The first message that arrived, handed straight to the pumping
    /// receiver (only when asked for and the queue was empty).
    @usableFromInline package var taken: MessageContent?
    /// Any descriptor in the set was ready (false: the wait timed out).
    @usableFromInline package var sawEvents = false
    /// The port's own eventfd was ready: if no message came of it, the
    /// receiver clears it (`PortCore.clearSpuriousReadiness`).
    @usableFromInline package var sawReadiness = false

    @inlinable @inline(__always)
    package init(taken: consuming MessageContent? = nil, sawEvents: Bool = false, sawReadiness: Bool = false) {
        self.taken = taken
        self.sawEvents = sawEvents
        self.sawReadiness = sawReadiness
    }
}
