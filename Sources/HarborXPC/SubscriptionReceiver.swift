// HarborXPC — the one thread that waits for every subscription's next event.
import HarborPorts
import HarborSystem

/// The one thread of this process that waits on the ports of every
/// subscription whose consumer waits for an event (a pending `next()` of
/// the `AsyncSequence`, an event handler between events), and hands each
/// message to that consumer (``SubscriberPort/receiveLater(_:)``).
///
/// A consumer's port is in the receiver's ``PortSet`` only while the
/// consumer waits: the receiver takes one message, takes the port out of
/// the set and hands the message on, and the consumer puts the port back
/// when it wants the next one. So each subscription's events come one at a
/// time, in order, unread events stay in the port's queue (held to its
/// limit, so the publisher's policy applies), and a consumer busy with an
/// event (a slow handler) holds up nobody else. The thread only dequeues
/// and hands on: decoding, handlers and resubscribing run elsewhere.
///
/// One per process rather than per session: a client has as many sessions
/// as services it uses, and the work per message here is a dequeue and a
/// hand-off, so one thread keeps up with them all. It starts with the first
/// consumer that waits, and then stays (asleep in `epoll_wait` while no
/// port has a message).
///
/// **Thread safety:** any thread.
final class SubscriptionReceiver: Sendable {
    /// The process's receiver; nil if its port set could not be made (out
    /// of descriptors).
    static let shared: SubscriptionReceiver? = try? SubscriptionReceiver()

    private let set: PortSet
    /// The ports in the set, by name, with a consumer waiting on each.
    private let waiting = HarborLock<[PortName: SubscriberPort]>([:])
    private let started = HarborLock(false)

    private init() throws(PortError) {
        set = try PortSet()
    }

    /// Starts the receiving thread, if it has not started.
    /// - Throws: ``XPCRichError/Code/connectionInvalid`` if no thread can be made.
    func start() throws(XPCRichError) {
        try started.withLock { (started: inout Bool) throws(XPCRichError) in
            guard !started else { return }
            do {
                try SystemThread.spawn { [self] in run() }.detach()
            } catch {
                throw XPCRichError(.connectionInvalid, "no thread to receive the subscriptions' events: \(error)")
            }
            started = true
        }
    }

    /// Waits on `port` until a message comes, which goes to its
    /// ``SubscriberPort/deliver(_:)``. Returns false if the port is gone
    /// (closed).
    func watch(_ port: SubscriberPort) -> Bool {
        waiting.withLock { $0[port.name] = port }
        guard port.insert(into: set) else {
            forget(port)
            return false
        }
        return true
    }

    /// Stops waiting on `port` (closed: its death took it out of the set).
    func forget(_ port: SubscriberPort) {
        _ = waiting.withLock { $0.removeValue(forKey: port.name) }
    }

    /// Takes one message at a time from any waiting port, takes that port
    /// out of the wait, and hands the message to its consumer.
    private func run() {
        while true {
            let message: Message
            do {
                message = try set.receive()
            } catch {
                _ = Parker().park(until: WaitDeadline(timeout: .milliseconds(1)))  // not expected with no deadline; never spin
                continue
            }
            guard let name = message.trailer.port,
                  let port = waiting.withLock({ $0.removeValue(forKey: name) }) else { continue }
            port.remove(from: set)
            port.deliver(message)
        }
    }
}
