// HarborXPC — what one message on a subscription's port means (XPCSubscription.swift).

/// What one message on a subscription's port means to its consumer
/// (`XPCSubscription.step(_:)`), whichever way the events are taken.
enum SubscriptionStep<Event: Sendable>: Sendable {
    /// An event, to hand out.
    case event(Event)
    /// An error for this message only (``XPCRichError/Code/codingFailed``):
    /// the stream goes on.
    case failed(XPCRichError)
    /// The error that ends the stream.
    case ended(XPCRichError)
    /// The publisher is gone, and the subscription asks the service's next
    /// instance for the stream (`resubscribeWithin`); the error is what
    /// ends the stream if no instance takes it.
    case lost(XPCRichError)
    /// Nothing for the consumer (another notification): take the next message.
    case skip
}
