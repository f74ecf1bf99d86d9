// HarborXPC — a subscriber's end of a publisher's stream: its own port.
import HarborCoding
import HarborPorts
import HarborSystem

/// A subscription to a service's ``XPCPublisher``, made by
/// ``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)``: the events arrive, in the
/// order published, on a port of this subscription's own, to which the
/// publisher holds the only send right.
///
/// ```swift
/// let ticks = try session.subscribe(Subscribe(), as: Tick.self)
/// for try await tick in ticks { print(tick.seconds) }   // or: try ticks.next()
/// ```
///
/// Three ways to take the events, one at a time: ``next()`` waits on the
/// calling thread; the subscription is an `AsyncSequence` (a `next()`
/// suspends the task, never blocking the concurrency pool, and cancelling
/// the task cancels the subscription); ``setEventHandler(_:)`` calls a
/// handler on the session's ``XPCHandlerTarget``. The last two take no
/// thread per event nor per subscription: one thread of the process waits
/// on the ports of every subscription whose consumer waits for an event
/// (and only those), and hands each its next event.
///
/// **Ends are typed.** When the publisher (or its process, even by SIGKILL)
/// goes without ending the stream, the send-once right it held for the end
/// dies (a send-once notification) and the stream throws
/// ``XPCRichError/Code/connectionInterrupted`` once the events queued
/// before are taken; so it does, with the reason, when the publisher ends
/// every stream on purpose (``XPCPublisher/cancel(reason:)``, a service
/// stopping). The ``XPCStreamPolicy/wait(keep:timeout:)`` policy giving up
/// on this subscriber makes it throw ``XPCRichError/Code/connectionInvalid``
/// with its reason. Both ends are sent on a send-once right this
/// subscription gave the publisher, so they arrive even at a full port.
///
/// **Resubscribing.** A subscription made with `resubscribeWithin`
/// (``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)``) does not
/// end with ``XPCRichError/Code/connectionInterrupted``: it asks the
/// service's next instance for the stream, through its session, and goes
/// on with the new publisher's events (``resubscriptions``). ``next()``
/// asks on its own thread; the `AsyncSequence` and an event handler ask on
/// a thread made for that resubscription (it may pause and retry for the
/// whole window), never on the thread that receives other subscriptions'
/// events.
///
/// ``cancel()``, or releasing the subscription, destroys its port: the
/// publisher hears of it at once (a dead-name notification) and ends the
/// subscription there. A subscription
/// is independent of the session that made it: cancelling the session
/// leaves it running.
///
/// **Thread safety:** any thread; one consumer at a time.
public final class XPCSubscription<Event: Decodable & Sendable>: Sendable {
    /// The name of the service that publishes the stream.
    public let service: String
    let port: SubscriberPort
    /// Where ``setEventHandler(_:)``'s handler runs: the session's target.
    let runner: HandlerRunner
    private let ended = HarborLock<XPCRichError?>(nil)
    private let cancelled = HarborLock(false)
    /// The request and session to ask the service's next instance with
    /// (`resubscribeWithin`); nil: the publisher's death ends the stream.
    private let again: StreamRequest?
    private let resubscribed = HarborLock(0)

    init(port: SubscriberPort, service: String, runner: HandlerRunner, again: StreamRequest?) {
        self.service = service
        self.port = port
        self.runner = runner
        self.again = again
    }

    /// How many times the subscription was taken again by a new publisher
    /// after the one before died (`resubscribeWithin` of
    /// ``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)``); the
    /// events published in between were lost.
    public var resubscriptions: Int { resubscribed.withLock { $0 } }

    /// Waits for the next event, on the calling thread.
    /// - Throws: ``XPCRichError/Code/connectionInterrupted`` when the
    ///   publisher is gone or ended every stream (with a resubscription
    ///   window: when no instance took the subscription again within it),
    ///   ``XPCRichError/Code/connectionInvalid`` when the publisher's policy
    ///   ended this stream or this subscription was cancelled (the stream is
    ///   then over: every later call throws the same), or
    ///   ``XPCRichError/Code/codingFailed`` for one event that is not an
    ///   `Event` (the stream goes on).
    public func next() throws(XPCRichError) -> Event {
        if let ended = endError { throw ended }
        while true {
            if wasCancelled { throw finish(SubscriberPort.cancelledError) }
            let received: Message?
            do {
                received = try port.receive()
            } catch {
                throw finish(XPCRichError(.connectionInvalid, "the subscription's port failed: \(error.code)"))
            }
            guard let message = received else {  // cancelled: the port is gone
                throw finish(SubscriberPort.cancelledError)
            }
            switch step(message) {
            case .event(let event): return event
            case .failed(let error): throw error
            case .ended(let error): throw finish(error)
            case .lost(let lost):
                if let end = resubscribe(after: lost) { throw finish(end) }
            case .skip: continue
            }
        }
    }

    /// Ends the subscription, here and at the publisher: a waiting
    /// ``next()`` throws ``XPCRichError/Code/connectionInvalid``, and so
    /// does every later one (events still queued are not given); a pending
    /// `next()` of the `AsyncSequence` returns nil, and an event handler
    /// is called once more, with that error. The subscription's port is
    /// destroyed now (or, with a ``next()`` waiting on a thread, as soon
    /// as that returns), so the publisher hears of it at once (a dead-name
    /// notification), while this object still exists: its count drops, the
    /// subscription's backlog, thread and right there go, and nothing
    /// published after reaches this process. Never waits; a second call
    /// does nothing.
    public func cancel() {
        cancelled.withLock { $0 = true }
        port.close()
    }

    /// Whether ``cancel()`` was called.
    var wasCancelled: Bool { cancelled.withLock { $0 } }

    /// The error that ended the stream, if it ended.
    var endError: XPCRichError? { ended.withLock { $0 } }

    /// What `message`, just taken from the port, means to the consumer.
    func step(_ message: consuming Message) -> SubscriptionStep<Event> {
        if wasCancelled { return .ended(SubscriberPort.cancelledError) }
        if let notification = message.notification {
            // The end comes on the send-once right the publisher holds:
            // exactly one of its message and its death notification
            // (the publisher went without sending it) arrives.
            guard case .sendOnce = notification else { return .skip }
            let lost = XPCRichError(.connectionInterrupted, "the publisher of \(service) went away")
            return again == nil ? .ended(lost) : .lost(lost)
        }
        switch message.id {
        case XPCWire.event:
            do {
                return .event(try MessageDecoder().decode(Event.self, from: &message))
            } catch {
                return .failed(XPCRichError(.codingFailed, "an event of \(service) is not a \(Event.self): \(error)"))
            }
        case XPCWire.streamEnd:
            let end = XPCSession.failure(message.text)
            return again != nil && end.code == .connectionInterrupted ? .lost(end) : .ended(end)
        case XPCWire.wake where message.trailer.sender.pid == ProcessIdentity.current.pid:
            return .ended(SubscriberPort.cancelledError)
        default:
            return .skip
        }
    }

    /// ``resubscribe(after:)`` on a thread made for it, so the caller
    /// (the task of an `AsyncSequence`, a handler's target) is not held for
    /// the pauses: `then` gets its answer on that thread.
    func resubscribeElsewhere(after lost: XPCRichError, then: @escaping @Sendable (XPCRichError?) -> Void) {
        do {
            try SystemThread.spawn { [self] in then(resubscribe(after: lost)) }.detach()
        } catch {
            then(XPCRichError(.connectionInvalid, "\(lost.reason), and no thread to resubscribe on: \(error)"))
        }
    }

    /// After the publisher's death: asks for the stream again through the
    /// session until a publisher takes it or `again.window` passes, pausing
    /// 10 ms, then twice as long each time up to a second, between tries
    /// while the name has no instance (``cancel()`` cuts a pause short).
    /// Returns nil when the stream goes on, else the error that ends it:
    /// a refusal from the new instance as it is, or `lost` once the
    /// window passed (at once without a window).
    private func resubscribe(after lost: XPCRichError) -> XPCRichError? {
        guard let again else { return lost }
        let deadline = ContinuousClock.now + again.window
        var pause = Duration.milliseconds(10)
        var last = lost
        let me = ProcessIdentity.current.pid
        while true {
            if wasCancelled { return SubscriberPort.cancelledError }
            do throws(XPCRichError) {
                try again.send(on: port)
                resubscribed.withLock { $0 += 1 }
                return nil
            } catch {
                switch error.code {
                case .serviceNotFound, .connectionInterrupted, .connectTimedOut:
                    last = error  // no instance (yet), or the old one's right: try again
                default:
                    return error
                }
            }
            let left = deadline - ContinuousClock.now
            if left <= .zero {
                return XPCRichError(.connectionInterrupted, "\(lost.reason), and no instance took the subscription "
                                    + "again within \(again.window) (\(last.code.rawValue): \(last.reason))")
            }
            // A pause ``cancel()`` ends: its wake comes to the port.
            do {
                guard let woken = try port.receive(timeout: Swift.min(pause, left)) else { return SubscriberPort.cancelledError }
                if woken.id == XPCWire.wake, woken.notification == nil, woken.trailer.sender.pid == me {
                    return SubscriberPort.cancelledError
                }
            } catch {
                // The pause passed (or the port failed: the next try says).
            }
            pause = Swift.min(pause * 2, .seconds(1))
        }
    }

    /// Records the end of the stream (the first one stays).
    func finish(_ error: XPCRichError) -> XPCRichError {
        ended.withLock { ended in
            if ended == nil { ended = error }
            return ended ?? error
        }
    }
}
