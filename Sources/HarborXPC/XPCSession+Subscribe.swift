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
    ///   - resubscribeWithin: nil (the default): the publisher's death, or
    ///     its ending every stream, ends the stream
    ///     (``XPCRichError/Code/connectionInterrupted``). A duration: the
    ///     subscription outlives its publisher, as the session outlives its
    ///     service. When the publisher dies or ends every stream, the
    ///     subscription sends `request` again through this session (which
    ///     looks the name up again, finding the service's next instance),
    ///     retrying for up to this long, and the stream goes on with the
    ///     new publisher's events (``XPCSubscription/resubscriptions``
    ///     counts the times; events published meanwhile are lost). The
    ///     subscription then keeps this session open. `request` must carry
    ///     no rights, regions or files (it is sent again as it was).
    /// - Throws: ``XPCRichError/Code/subscriptionRejected`` if the publisher
    ///   refused (the uid holds its share), what a call throws
    ///   (``sendSync(_:)``), ``XPCRichError/Code/noReply`` if the service
    ///   does not publish a stream for it, or
    ///   ``XPCRichError/Code/codingFailed`` for a bad `queueLimit`, or a
    ///   `request` with rights and a `resubscribeWithin`.
    public func subscribe<Request: Encodable, Event: Decodable & Sendable>(
        _ request: Request,
        as type: Event.Type = Event.self,
        queueLimit: Int = 16,
        resubscribeWithin: Duration? = nil
    ) throws(XPCRichError) -> XPCSubscription<Event> {
        let message = try Self.encode(request, id: XPCWire.subscribe)
        var again: StreamRequest?
        if let window = resubscribeWithin {
            guard message.content.isPlain else {
                throw XPCRichError(.codingFailed, "a request that carries rights, regions or files cannot be sent "
                                   + "again: resubscribing needs one without")
            }
            again = StreamRequest(session: self, body: message.body, window: window)
        }
        let port = ReceiveRight()
        do {
            try port.setQueueLimit(queueLimit)
        } catch {
            throw XPCRichError(.codingFailed, "queue limit \(queueLimit): \(error)")
        }
        let subscriberPort = SubscriberPort(port)
        try openStream(message, on: subscriberPort)
        return XPCSubscription(port: subscriberPort, service: service, runner: runner, again: again)
    }

    /// Sends `request` with the only send right to `port` and a send-once
    /// right to it, and waits for the publisher's answer.
    func openStream(_ request: consuming Message, on port: SubscriberPort) throws(XPCRichError) {
        // The publisher's send right is the only one; the send-once right
        // carries the stream's end, or dies with the publisher (a send-once
        // notification here), so either way the stream ends typed.
        let cancelled = SubscriberPort.cancelledError
        guard let send = port.makeSendRight() else { throw cancelled }
        request.attach(send)
        switch port.makeSendOnceRight() {
        case .some(let end): request.attach(end)
        case .none: throw cancelled
        }
        _ = try callThroughOwnPort(request)
    }
}
