// HarborXPC — a subscription's events handed to a handler on the session's target.
import HarborPorts
import HarborSystem

extension XPCSubscription {
    /// The handler of ``setEventHandler(_:)``.
    typealias EventHandler = @Sendable (Result<Event, XPCRichError>) -> Void

    /// Calls `handler` with each event, in order, and once more with the
    /// error that ended the stream (a `.codingFailed` event does not end
    /// it), on the ``XPCHandlerTarget`` of the session that made the
    /// subscription (with ``XPCHandlerTarget/ownThread``, on a serial
    /// dispatch queue of the subscription's own). No thread is the
    /// subscription's: while the handler waits for an event, the port waits
    /// with every other subscription's on the process's one receiving
    /// thread, which posts each event to the target; while the handler
    /// runs, the port is out of that wait, so the next event is taken only
    /// once it returned (one at a time, in order), a slow handler holds up
    /// no other subscription, and unread events stay held to the port's
    /// queue limit (the publisher's policy then applies). On a loop target
    /// whose thread has ended nothing runs: the subscription is cancelled.
    /// - Throws: ``XPCRichError/Code/connectionInvalid`` if the receiving
    ///   thread cannot be made.
    public func setEventHandler(_ handler: @escaping @Sendable (Result<Event, XPCRichError>) -> Void) throws(XPCRichError) {
        guard let receiver = SubscriptionReceiver.shared else {
            throw XPCRichError(.connectionInvalid, "no port set to receive events with")
        }
        try receiver.start()
        takeNext(handler, on: runner.elsewhere(label: "harbor.subscription.\(service)"))
    }

    /// Takes the next message for `handler`: at once if one is queued, else
    /// when the receiving thread hands it over; either way it is handled on
    /// `target`.
    private func takeNext(_ handler: @escaping EventHandler, on target: HandlerRunner) {
        if let ended = endError ?? (wasCancelled ? finish(SubscriberPort.cancelledError) : nil) {
            return target.post({ handler(.failure(ended)) }, ifDropped: {})
        }
        let handle: @Sendable (MessageBox) -> Void = { [self] box in
            target.post({ self.handleMessage(box, handler, on: target) }, ifDropped: { self.cancel() })
        }
        if let queued = port.tryReceive() {
            handle(MessageBox(.success(queued)))
        } else {
            port.receiveLater(handle)
        }
    }

    /// On `target`: gives the message's event or error to `handler`, then
    /// takes the next message unless the stream ended.
    private func handleMessage(_ box: MessageBox, _ handler: @escaping EventHandler, on target: HandlerRunner) {
        let message: Message
        do {
            message = try box.take()
        } catch {
            return handler(.failure(finish(error)))
        }
        switch step(message) {
        case .event(let event):
            handler(.success(event))
        case .failed(let error):
            handler(.failure(error))
        case .ended(let error):
            return handler(.failure(finish(error)))
        case .lost(let lost):
            return resubscribeElsewhere(after: lost) { [self] end in
                guard let end else { return takeNext(handler, on: target) }
                let ended = finish(end)
                target.post({ handler(.failure(ended)) }, ifDropped: {})
            }
        case .skip:
            break
        }
        takeNext(handler, on: target)
    }
}
