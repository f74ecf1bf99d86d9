// HarborXPC — a subscriber's end of a publisher's stream: its own port.
import HarborCoding
import HarborPorts
import HarborSystem

/// A subscription to a service's ``XPCPublisher``, made by
/// ``XPCSession/subscribe(_:as:queueLimit:)``: the events arrive, in the
/// order published, on a port of this subscription's own, to which the
/// publisher holds the only send right.
///
/// ```swift
/// let ticks = try session.subscribe(Subscribe(), as: Tick.self)
/// for try await tick in ticks { print(tick.seconds) }   // or: try ticks.next()
/// ```
///
/// Three ways to take the events, one at a time: ``next()`` waits on the
/// calling thread; the subscription is an `AsyncSequence` (each `next()`
/// waits on a thread of its own, so it never blocks the concurrency pool,
/// and cancelling the task cancels the subscription);
/// ``setEventHandler(_:)`` calls a handler on the session's
/// ``XPCHandlerTarget``.
///
/// **Ends are typed.** When the publisher (or its process, even by SIGKILL)
/// goes without ending the stream, the send-once right it held for the end
/// dies (a send-once notification) and the stream throws
/// ``XPCRichError/Code/connectionInterrupted`` once the events queued
/// before are taken; a publisher that ends the stream on purpose
/// (``XPCPublisher/cancel(reason:)``, or the ``XPCStreamPolicy/wait(keep:timeout:)``
/// policy giving up on this subscriber) makes it throw
/// ``XPCRichError/Code/connectionInvalid`` with its reason, sent on a
/// send-once right this subscription gave it, so it arrives even at a full
/// port.
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
    private let port: SubscriberPort
    /// Where ``setEventHandler(_:)``'s handler runs: the session's target.
    private let runner: HandlerRunner
    private let ended = HarborLock<XPCRichError?>(nil)
    private let cancelled = HarborLock(false)

    init(port: consuming ReceiveRight, service: String, runner: HandlerRunner) {
        self.service = service
        self.port = SubscriberPort(port)
        self.runner = runner
    }

    /// Waits for the next event.
    /// - Throws: ``XPCRichError/Code/connectionInterrupted`` when the
    ///   publisher is gone, ``XPCRichError/Code/connectionInvalid`` when it
    ///   ended the stream or this subscription was cancelled (the stream is
    ///   then over: every later call throws the same), or
    ///   ``XPCRichError/Code/codingFailed`` for one event that is not an
    ///   `Event` (the stream goes on).
    public func next() throws(XPCRichError) -> Event {
        if let ended = ended.withLock({ $0 }) { throw ended }
        let me = ProcessIdentity.current.pid
        while true {
            if wasCancelled { throw finish(XPCRichError(.connectionInvalid, "the subscription was cancelled")) }
            let received: Message?
            do {
                received = try port.receive()
            } catch {
                throw finish(XPCRichError(.connectionInvalid, "the subscription's port failed: \(error.code)"))
            }
            guard var message = received else {  // cancelled: the port is gone
                throw finish(XPCRichError(.connectionInvalid, "the subscription was cancelled"))
            }
            if wasCancelled { throw finish(XPCRichError(.connectionInvalid, "the subscription was cancelled")) }
            if let notification = message.notification {
                // The end comes on the send-once right the publisher holds:
                // exactly one of its message and its death notification
                // (the publisher went without sending it) arrives.
                if case .sendOnce = notification {
                    throw finish(XPCRichError(.connectionInterrupted, "the publisher of \(service) went away"))
                }
                continue
            }
            switch message.id {
            case XPCWire.event:
                do {
                    return try MessageDecoder().decode(Event.self, from: &message)
                } catch {
                    throw XPCRichError(.codingFailed, "an event of \(service) is not a \(Event.self): \(error)")
                }
            case XPCWire.streamEnd:
                throw finish(XPCSession.failure(message.text))
            case XPCWire.wake where message.trailer.sender.pid == me:
                throw finish(XPCRichError(.connectionInvalid, "the subscription was cancelled"))
            default:
                continue
            }
        }
    }

    /// Ends the subscription, here and at the publisher: a waiting
    /// ``next()`` throws ``XPCRichError/Code/connectionInvalid``, and so
    /// does every later one (events still queued are not given). The
    /// subscription's port is destroyed now (or, with a ``next()``
    /// waiting, as soon as that returns), so the publisher hears of it at
    /// once (a dead-name notification), while this object still exists:
    /// its count drops, the subscription's backlog, thread and right there
    /// go, and nothing published after reaches this process. Never waits;
    /// a second call does nothing.
    public func cancel() {
        cancelled.withLock { $0 = true }
        port.close()
    }

    /// Whether ``cancel()`` was called.
    var wasCancelled: Bool { cancelled.withLock { $0 } }

    /// Calls `handler` with each event, in order, and once more with the
    /// error that ended the stream (a `.codingFailed` event does not end
    /// it), on the ``XPCHandlerTarget`` of the session that made the
    /// subscription (with ``XPCHandlerTarget/ownThread``, on a thread of
    /// the subscription's own). The events are received on a thread of
    /// their own, which hands each to the target and waits for the handler
    /// before it takes the next (as a session's messages are): one at a
    /// time, in order, and unread events stay held to the port's queue
    /// limit (the publisher's policy then applies). On a loop target whose
    /// thread has ended nothing runs: the subscription is cancelled.
    /// - Throws: ``XPCRichError/Code/connectionInvalid`` if no thread can be made.
    public func setEventHandler(_ handler: @escaping @Sendable (Result<Event, XPCRichError>) -> Void) throws(XPCRichError) {
        let runner = self.runner
        do {
            try SystemThread.spawn { [self] in
                while true {
                    let result: Result<Event, XPCRichError>
                    do throws(XPCRichError) {
                        result = .success(try next())
                    } catch {
                        result = .failure(error)
                    }
                    let ran = runner.run { handler(result) }
                    if case .failure(let error) = result, error.code != .codingFailed { return }
                    if !ran {
                        cancel()  // the target is gone: nothing can take the events
                        return
                    }
                }
            }.detach()
        } catch {
            throw XPCRichError(.connectionInvalid, "no thread for the event handler: \(error)")
        }
    }

    /// Records the end of the stream (the first one stays).
    private func finish(_ error: XPCRichError) -> XPCRichError {
        ended.withLock { ended in
            if ended == nil { ended = error }
            return ended ?? error
        }
    }
}
