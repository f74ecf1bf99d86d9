// Harbor — SubscriberPort: a piece of an XPC subscription (XPCSubscription.swift).
import HarborPorts
import HarborSystem

/// A subscription's port, which ``close()`` destroys at once: the
/// publisher holds the only send right to it, so its death (a dead-name
/// notification there) ends the subscription on the publisher's side while
/// the ``XPCSubscription`` object lives on.
///
/// The receive right is held by reference: ``close()`` drops the
/// subscription's hold and wakes a ``receive(timeout:)`` still waiting,
/// which drops its own as it returns, so the port dies as soon as nobody
/// uses it, never under a waiting receiver.
///
/// A consumer that must not block a thread (the `AsyncSequence`, an event
/// handler) waits with ``receiveLater(_:)`` instead: the port then sits in
/// the process's ``SubscriptionReceiver`` until its next message comes, and
/// ``close()`` ends such a wait at once.
final class SubscriberPort: Sendable {
    /// What a consumer gets once the subscription is cancelled.
    static var cancelledError: XPCRichError { XPCRichError(.connectionInvalid, "the subscription was cancelled") }

    /// Where ``receiveLater(_:)``'s message goes: the message, or the
    /// error that ended the wait.
    typealias Delivery = @Sendable (MessageBox) -> Void

    private let right: HarborLock<ReceiveRightToken?>
    /// A send-once right to the port: wakes a waiting ``receive(timeout:)``
    /// at ``close()`` (not a sender: the publisher's right stays the only one).
    private let wake: SessionWake
    /// The consumer waiting through ``receiveLater(_:)``, if one does.
    private let waiting = HarborLock<Delivery?>(nil)
    /// The port's name (its key in the ``SubscriptionReceiver``).
    let name: PortName

    init(_ port: consuming ReceiveRight) {
        wake = SessionWake(port.makeSendOnceRight())
        name = port.name
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

    /// Takes the next message if one is queued; nil if none is, or once
    /// ``close()`` ran. Never waits.
    func tryReceive() -> Message? {
        guard let token = right.withLock({ $0 }) else { return nil }
        return ReceiveRight(token: token).tryReceive()
    }

    /// Hands the next message to `delivery`, without a thread of the
    /// caller's: the process's ``SubscriptionReceiver`` waits for it and
    /// calls `delivery` on its thread (which `delivery` must not block), or
    /// `delivery` gets ``XPCRichError/Code/connectionInvalid`` at once when
    /// ``close()`` ran or runs first, or no receiving thread can be made.
    /// One wait at a time; take a queued message with ``tryReceive()``
    /// first (this is for an empty queue).
    func receiveLater(_ delivery: @escaping Delivery) {
        guard let receiver = SubscriptionReceiver.shared else {
            return delivery(MessageBox(.failure(XPCRichError(.connectionInvalid, "no port set to receive events with"))))
        }
        do {
            try receiver.start()
        } catch {
            return delivery(MessageBox(.failure(error)))
        }
        let open = right.withLock { right in
            guard right != nil else { return false }
            waiting.withLock { $0 = delivery }
            return true
        }
        guard open else { return delivery(MessageBox(.failure(Self.cancelledError))) }
        if !receiver.watch(self) {  // closed meanwhile: close() ended the wait, unless it came first
            waiting.withLock { $0.take() }.map { $0(MessageBox(.failure(Self.cancelledError))) }
        }
    }

    /// The ``SubscriptionReceiver``'s hand-off: gives `message` to the
    /// waiting consumer (dropped if ``close()`` ended the wait first).
    func deliver(_ message: consuming Message) {
        guard let delivery = waiting.withLock({ $0.take() }) else { return }
        delivery(MessageBox(.success(message)))
    }

    /// Puts the port in `set`; false once ``close()`` ran.
    func insert(into set: borrowing PortSet) -> Bool {
        guard let token = right.withLock({ $0 }) else { return false }
        do {
            try set.insert(ReceiveRight(token: token))
            return true
        } catch {
            return false
        }
    }

    /// Takes the port out of `set` (a closed port left it as it died).
    func remove(from set: borrowing PortSet) {
        guard let token = right.withLock({ $0 }) else { return }
        set.remove(ReceiveRight(token: token))
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

    /// Destroys the port now, or, when a ``receive(timeout:)`` waits on
    /// it, as soon as that returns (woken by this call); a
    /// ``receiveLater(_:)`` wait ends now with
    /// ``XPCRichError/Code/connectionInvalid``. Idempotent; never waits.
    func close() {
        wake.fire()
        _ = right.withLock { $0.take() }  // the port dies here, after the lock, unless a receive holds it
        SubscriptionReceiver.shared?.forget(self)
        if let delivery = waiting.withLock({ $0.take() }) {
            delivery(MessageBox(.failure(Self.cancelledError)))
        }
    }
}
