// HarborXPC — a session's subscriptions to its service's streams.
import HarborPorts

extension XPCSession {
    /// Asks the service for a stream of events and returns the subscription
    /// once the service's ``XPCPublisher`` has taken it.
    ///
    /// ```swift
    /// let ticks = try session.subscribe(Subscribe(), as: Tick.self)
    /// while let tick = try? ticks.next() { print(tick.seconds) }
    /// ```
    ///
    /// Makes a port for the subscription and sends the only send right to
    /// it, and a send-once right to it for the end of the stream, with
    /// `request` (its last two carried rights: the request's value is
    /// the service's to decode, with ``XPCReceivedMessage/decode(as:)``, to
    /// know what is asked for). The service's message handler sees
    /// ``XPCReceivedMessage/isSubscriptionRequest`` and hands the message
    /// to its publisher, which answers.
    ///
    /// - Parameters:
    ///   - request: what to subscribe to, as the service understands it.
    ///   - type: the type of the events.
    ///   - queueLimit: the subscription port's queue limit (1…1024): how
    ///     many events wait here before the publisher's backlog for this
    ///     subscriber fills (``XPCStreamPolicy``).
    /// - Throws: ``XPCRichError/Code/subscriptionRejected`` if the publisher
    ///   refused (the uid holds its share), what a call throws
    ///   (``sendSync(_:)``), or ``XPCRichError/Code/noReply`` if the service
    ///   does not publish a stream for it.
    public func subscribe<Request: Encodable, Event: Decodable & Sendable>(
        _ request: Request,
        as type: Event.Type = Event.self,
        queueLimit: Int = 16
    ) throws(XPCRichError) -> XPCSubscription<Event> {
        var message = try Self.encode(request, id: XPCWire.subscribe)
        let port = ReceiveRight()
        do {
            try port.setQueueLimit(queueLimit)
        } catch {
            throw XPCRichError(.codingFailed, "queue limit \(queueLimit): \(error)")
        }
        // The publisher's send right is the only one; the send-once right
        // carries the stream's end, or dies with the publisher (a send-once
        // notification here), so either way the stream ends typed.
        message.attach(port.makeSendRight())
        message.attach(port.makeSendOnceRight())
        _ = try callThroughOwnPort(message)
        return XPCSubscription(port: port, service: service, runner: runner)
    }
}
