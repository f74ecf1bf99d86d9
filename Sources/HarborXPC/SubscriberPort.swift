// Harbor — SubscriberPort: a piece of an XPC subscription (XPCSubscription.swift).
import HarborPorts
import HarborSystem

/// A subscription's port, which ``close()`` destroys at once: the
/// publisher holds the only send right to it, so its death (a dead-name
/// notification there) ends the subscription on the publisher's side while
/// the ``XPCSubscription`` object lives on.
///
/// The receive right is held by reference: ``close()`` drops the
/// subscription's hold and wakes a ``receive()`` still waiting, which
/// drops its own as it returns, so the port dies as soon as nobody uses
/// it, never under a waiting receiver.
final class SubscriberPort: Sendable {
    private let right: HarborLock<ReceiveRightToken?>
    /// A send-once right to the port: wakes a waiting ``receive()`` at
    /// ``close()`` (not a sender: the publisher's right stays the only one).
    private let wake: SessionWake

    init(_ port: consuming ReceiveRight) {
        wake = SessionWake(port.makeSendOnceRight())
        right = HarborLock(Optional(port.token))
    }

    /// Takes the next message, waiting for one; nil once ``close()`` ran.
    /// The wake ``close()`` sends comes back as an ``XPCWire/wake`` message
    /// from this process.
    /// - Parameter timeout: how long to wait (nil: for ever).
    /// - Throws: `PortError` `.timedOut` when `timeout` passes first.
    func receive(timeout: Duration? = nil) throws(PortError) -> Message? {
        guard let token = right.withLock({ $0 }) else { return nil }
        // Another handle on the same right while this receive waits; it
        // holds the port alive until the receive returns.
        return try ReceiveRight(token: token).receive(timeout: timeout)
    }

    /// A send right to the port (for a publisher: the only one while the
    /// subscription is open); nil once ``close()`` ran.
    func makeSendRight() -> SendRight? {
        right.withLock { $0 }.map { ReceiveRight(token: $0).makeSendRight() }
    }

    /// A send-once right to the port (a publisher's end of the stream);
    /// nil once ``close()`` ran.
    func makeSendOnceRight() -> SendOnceRight? {
        guard let token = right.withLock({ $0 }) else { return nil }
        return ReceiveRight(token: token).makeSendOnceRight()
    }

    /// Destroys the port now, or, when a ``receive()`` waits on it, as
    /// soon as that returns (woken by this call). Idempotent; never waits.
    func close() {
        wake.fire()
        _ = right.withLock { $0.take() }  // the port dies here, after the lock, unless a receive holds it
    }
}
