// Harbor — StreamRequest: a piece of an XPC subscription (XPCSubscription.swift).
import HarborPorts

/// What a subscription made with a resubscription window
/// (``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)``) needs to
/// ask the service's next instance for the same stream: the session (which
/// looks the name up again) and the request's bytes (a request without
/// rights, so it can be sent again as it was).
///
/// It holds the session: a subscription that resubscribes keeps its session
/// open. Cancelling the session ends the resubscribing (the stream then
/// ends as one without a window does).
final class StreamRequest: Sendable {
    let session: XPCSession
    let body: [UInt8]
    /// How long after the publisher's loss the subscription keeps asking.
    let window: Duration

    init(session: XPCSession, body: [UInt8], window: Duration) {
        self.session = session
        self.body = body
        self.window = window
    }

    /// Asks the service (its instance now) for the stream on `port` again.
    /// - Throws: what ``XPCSession/subscribe(_:as:queueLimit:resubscribeWithin:)`` throws.
    func send(on port: SubscriberPort) throws(XPCRichError) {
        try session.openStream(Message(id: XPCWire.subscribe, body: body), on: port)
    }
}
