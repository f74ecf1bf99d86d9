// HarborXPC — a subscription's events as an AsyncSequence.
import HarborSystem

extension XPCSubscription: AsyncSequence {
    /// The events, in order: `for try await event in subscription`. The
    /// loop ends when the subscription is cancelled, and throws the
    /// ``XPCRichError`` that ended the stream otherwise.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: XPCSubscription<Event>

        /// The next event, waited for on a thread of its own; nil once the
        /// subscription is cancelled (cancelling the task cancels it).
        public mutating func next() async throws -> Event? {
            let subscription = self.subscription
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Event?, any Error>) in
                    do {
                        try SystemThread.spawn {
                            do throws(XPCRichError) {
                                continuation.resume(returning: try subscription.next())
                            } catch where error.code == .connectionInvalid && subscription.wasCancelled {
                                continuation.resume(returning: nil)
                            } catch {
                                continuation.resume(throwing: error)
                            }
                        }.detach()
                    } catch {
                        continuation.resume(throwing: XPCRichError(.connectionInvalid, "no thread for the event: \(error)"))
                    }
                }
            } onCancel: {
                subscription.cancel()
            }
        }
    }

    /// An iterator over the events.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }
}
