// HarborXPC — a subscription's events as an AsyncSequence.
import HarborPorts
import HarborSystem

extension XPCSubscription: AsyncSequence {
    /// The events, in order: `for try await event in subscription`. The
    /// loop ends when the subscription is cancelled, and throws the
    /// ``XPCRichError`` that ended the stream otherwise.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: XPCSubscription<Event>

        /// The next event: taken at once if one is queued, else the task
        /// suspends (no thread waits for it: the process's one receiving
        /// thread hands the event over); nil once the subscription is
        /// cancelled (cancelling the task cancels it).
        public mutating func next() async throws -> Event? {
            let subscription = self.subscription
            return try await withTaskCancellationHandler {
                let taken: Result<Event, XPCRichError>
                do throws(XPCRichError) {
                    taken = .success(try await subscription.nextWithoutThread())
                } catch {
                    taken = .failure(error)
                }
                switch taken {
                case .success(let event): return event
                case .failure(let error) where error.code == .connectionInvalid && subscription.wasCancelled: return nil
                case .failure(let error): throw error
                }
            } onCancel: {
                subscription.cancel()
            }
        }
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }

    /// The next event, as ``next()`` gives it, suspending the task (not a
    /// thread) while none is queued; a resubscription runs on a thread of
    /// its own (``resubscribeElsewhere(after:then:)``).
    func nextWithoutThread() async throws(XPCRichError) -> Event {
        if let ended = endError { throw ended }
        while true {
            if wasCancelled { throw finish(SubscriberPort.cancelledError) }
            let message: Message
            if let queued = port.tryReceive() {
                message = queued
            } else {
                let box = await withCheckedContinuation { (continuation: CheckedContinuation<MessageBox, Never>) in
                    port.receiveLater { continuation.resume(returning: $0) }
                }
                do {
                    message = try box.take()
                } catch {
                    throw finish(error)
                }
            }
            switch step(message) {
            case .event(let event): return event
            case .failed(let error): throw error
            case .ended(let error): throw finish(error)
            case .lost(let lost):
                let end = await withCheckedContinuation { (continuation: CheckedContinuation<XPCRichError?, Never>) in
                    resubscribeElsewhere(after: lost) { continuation.resume(returning: $0) }
                }
                if let end { throw finish(end) }
            case .skip: continue
            }
        }
    }
}
