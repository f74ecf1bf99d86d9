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
/// ``setEventHandler(_:)`` calls a handler on a thread of its own.
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
/// Releasing the subscription destroys its port: the publisher hears of it
/// (a dead-name notification) and ends the subscription. A subscription
/// is independent of the session that made it: cancelling the session
/// leaves it running.
///
/// **Thread safety:** any thread; one consumer at a time.
public final class XPCSubscription<Event: Decodable & Sendable>: Sendable {
    /// The name of the service that publishes the stream.
    public let service: String
    private let port: ReceiveRight
    private let stop: SessionWake
    private let ended = HarborLock<XPCRichError?>(nil)
    private let cancelled = HarborLock(false)

    init(port: consuming ReceiveRight, service: String) {
        self.service = service
        stop = SessionWake(port.makeSendOnceRight())  // not a sender: the publisher's right stays the only one
        self.port = port
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
            var message: Message
            do {
                message = try port.receive()
            } catch {
                throw finish(XPCRichError(.connectionInvalid, "the subscription's port failed: \(error.code)"))
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

    /// Ends the subscription here: a waiting ``next()`` throws
    /// ``XPCRichError/Code/connectionInvalid``, and so does every later
    /// one (events still queued are not given). Never waits. The publisher
    /// ends its side when the subscription is released.
    public func cancel() {
        cancelled.withLock { $0 = true }
        stop.fire()
    }

    /// Whether ``cancel()`` was called.
    var wasCancelled: Bool { cancelled.withLock { $0 } }

    /// Calls `handler` with each event, in order, on a thread of its own,
    /// and once more with the error that ended the stream (a
    /// `.codingFailed` event does not end it).
    /// - Throws: ``XPCRichError/Code/connectionInvalid`` if no thread can be made.
    public func setEventHandler(_ handler: @escaping @Sendable (Result<Event, XPCRichError>) -> Void) throws(XPCRichError) {
        do {
            try SystemThread.spawn { [self] in
                while true {
                    do throws(XPCRichError) {
                        handler(.success(try next()))
                    } catch where error.code == .codingFailed {
                        handler(.failure(error))
                    } catch {
                        handler(.failure(error))
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
