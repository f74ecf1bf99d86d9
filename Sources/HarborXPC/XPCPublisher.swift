// HarborXPC — a service's stream of events, each subscriber on its own port.
import HarborPorts
import HarborSystem

/// A stream of events a service publishes to every subscriber (sd-bus
/// signals, Varlink's `more`, XPC's event streams): each subscriber
/// receives on a port of its own, held by nobody else.
///
/// ```swift
/// let ticks = try XPCPublisher<Tick>(policy: .dropOldest(keep: 8))
/// let listener = try XPCListener(service: "com.example.clock") { request in
///     request.accept { message in
///         if message.isSubscriptionRequest {        // XPCSession.subscribe(_:as:)
///             try? ticks.subscribe(message)         // answers the request
///             return nil
///         }
///         return Now(seconds: clock())
///     }
/// }
/// ticks.publish(Tick(seconds: clock()))             // to every subscriber; never waits
/// ```
///
/// - **Each subscriber its own port.** ``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)``
///   makes a port and sends the only send right to it (and a send-once
///   right for the stream's end) with its request; ``subscribe(_:)`` takes them. A subscriber that falls behind fills its
///   own port and then its own backlog here, which ``policy`` bounds
///   (``XPCStreamPolicy``): ``publish(_:)`` never waits, and the other
///   subscribers go on receiving. Each subscription has a thread that sends
///   its backlog, so only that stream waits for room.
/// - **A subscriber's death ends its subscription.** The publisher asks a
///   dead-name notification for each subscriber's port: when the subscriber
///   releases its subscription, or its process dies (even by SIGKILL), the
///   subscription ends at once, with nothing published, and everything it
///   held (the right and its descriptor, the backlog, the thread, its share)
///   goes. Never by polling.
/// - **The publisher's death ends the streams.** When its process dies
///   (even by SIGKILL), the send-once right it holds for each stream's end
///   dies: every stream ends with ``XPCRichError/Code/connectionInterrupted``;
///   ``cancel(reason:)`` (also run when the publisher is released) ends
///   them, after what was published before, with
///   ``XPCRichError/Code/connectionInterrupted`` and the reason (the
///   publisher went away, as when its process ends: a subscription made
///   with a resubscription window asks again): the end goes on the
///   subscriber's send-once right, which even a full port takes. A
///   subscriber the stream policy gives up on gets
///   ``XPCRichError/Code/connectionInvalid`` instead (its stream alone is
///   over).
/// - **Whoever asks pays.** One uid holds at most `subscriptionsPerUid` of
///   a publisher's subscriptions and all uids together `totalSubscriptions`;
///   past that a request is refused with
///   ``XPCRichError/Code/subscriptionRejected`` while other uids are served.
///
/// **Thread safety:** any thread.
public final class XPCPublisher<Event: Encodable & Sendable>: Sendable {
    /// What happens to a subscriber that falls behind.
    public let policy: XPCStreamPolicy
    private let shares: UidShares
    private let streams = HarborLock<(table: [PortName: PublisherStream<Event>], cancelled: XPCRichError?)>(([:], nil))
    private let monitor = SessionMonitor()

    /// A publisher with no subscribers.
    ///
    /// - Parameters:
    ///   - policy: what happens to a subscriber that falls behind.
    ///   - subscriptionsPerUid: the most subscriptions one uid holds (whoever
    ///     asks pays: each costs a port right, a backlog and a thread here).
    ///   - totalSubscriptions: the most subscriptions all uids hold together.
    /// - Throws: ``XPCRichError/Code/connectionInvalid`` if no thread can be
    ///   made to hear of subscribers' deaths.
    public init(policy: XPCStreamPolicy = .dropOldest(keep: 64),
                subscriptionsPerUid: Int = 64,
                totalSubscriptions: Int = 1024) throws(XPCRichError) {
        self.policy = policy
        shares = UidShares(perUid: subscriptionsPerUid, total: totalSubscriptions)
        let monitor = self.monitor
        do {
            try SystemThread.spawn { [weak self] in
                monitor.run { name in self?.subscriberDied(name) }
            }.detach()
        } catch {
            throw XPCRichError(.connectionInvalid, "no thread for the publisher: \(error)")
        }
    }

    deinit {
        cancel(reason: "the publisher was released")
        monitor.stop()
    }

    /// How many subscriptions are live.
    public var subscriberCount: Int { streams.withLock { $0.table.count } }

    /// Subscribes the sender of `message`, a request that
    /// ``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)`` sent
    /// (``XPCReceivedMessage/isSubscriptionRequest``), and answers it: from
    /// now on every published event goes to the subscriber's port. Decode
    /// the request's value first if it says what to subscribe to.
    ///
    /// - Throws: ``XPCRichError/Code/subscriptionRejected`` if the message
    ///   is not a subscription request, the sender's uid holds its share,
    ///   all shares are taken, or the publisher was cancelled (the request
    ///   is answered with the same error, so the subscriber's call throws
    ///   it too).
    public func subscribe(_ message: XPCReceivedMessage) throws(XPCRichError) {
        func refuse(_ error: XPCRichError) -> XPCRichError {
            message.fail(error)
            return error
        }
        guard message.isSubscriptionRequest, let (right, end) = message.takeSubscriberRights() else {
            throw refuse(XPCRichError(.subscriptionRejected, "the message is not a subscription request"))
        }
        let uid = UInt32(message.sender.uid)
        guard shares.take(for: uid) else {
            throw refuse(XPCRichError(.subscriptionRejected,
                                      "uid \(uid) holds \(shares.perUid) subscriptions of this publisher, "
                                      + "or the publisher \(shares.total)"))
        }
        let stream = PublisherStream<Event>(right: right, end: end, uid: uid, policy: policy)
        let cancelled = streams.withLock { streams -> XPCRichError? in
            if let cancelled = streams.cancelled { return cancelled }
            streams.table[right.name] = stream
            return nil
        }
        if let cancelled {
            shares.give(for: uid)
            throw refuse(XPCRichError(.subscriptionRejected, "the publisher was cancelled: \(cancelled.reason)"))
        }
        right.requestDeadNameNotification(to: monitor.port.makeSendOnceRight())
        let name = right.name
        do {
            try SystemThread.spawn { [weak self] in
                stream.run()
                self?.remove(name)
            }.detach()
        } catch {
            remove(name)
            throw refuse(XPCRichError(.subscriptionRejected, "no thread for the subscription: \(error)"))
        }
        do {
            try message.reply(true)
        } catch {
            stream.end(error, tell: false)  // the subscriber is gone already
            remove(name)
            throw error
        }
    }

    /// Sends `event` to every subscriber, each through its own backlog and
    /// port as ``policy`` says. Never waits: a slow subscriber delays or
    /// loses only its own events.
    public func publish(_ event: Event) {
        let live = streams.withLock { Array($0.table.values) }
        for stream in live { stream.offer(event) }
    }

    /// Ends every subscription: each subscriber's stream gives what was
    /// published before (what its port has room for now) and then throws
    /// ``XPCRichError/Code/connectionInterrupted`` with `reason` (as when
    /// the publisher's process ends: a subscription with a resubscription
    /// window asks the service again); later requests are refused.
    public func cancel(reason: String) {
        let error = XPCRichError(.connectionInterrupted, "the publisher ended the stream: \(reason)")
        let ending = streams.withLock { streams -> [PublisherStream<Event>] in
            if streams.cancelled == nil { streams.cancelled = error }
            return Array(streams.table.values)
        }
        for stream in ending { stream.end(error, tell: true) }
    }

    /// A subscriber's port died: its subscription ends now.
    private func subscriberDied(_ name: PortName) {
        let stream = streams.withLock { $0.table[name] }
        stream?.end(XPCRichError(.connectionInvalid, "the subscriber went away"), tell: false)
        remove(name)
    }

    /// Forgets a subscription and gives its share back, once.
    private func remove(_ name: PortName) {
        let gone = streams.withLock { $0.table.removeValue(forKey: name) }
        if let gone { shares.give(for: gone.uid) }
    }
}
