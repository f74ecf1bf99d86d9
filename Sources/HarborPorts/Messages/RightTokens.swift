// Harbor — the objects that hold one reference of each kind of right.
//
// Each right is backed by exactly one token object; the token's deinit is
// where the right's death is reported to its port. That single place makes
// "a right released exactly once" true wherever the right travels: in a
// variable, in a message in a queue, in an error returning an undelivered
// message. The public right types (`ReceiveRight`, `SendOnceRight`:
// ~Copyable; `SendRight`: copyable) are thin wrappers around these.

import Synchronization
import HarborSystem

/// One send right to a port. ARC counts copies of a `SendRight`; the port
/// counts tokens; when the last token dies, the port may see no-senders.
@usableFromInline
package final class SendRightToken: Sendable {
    package let port: PortCore

    package init(port: PortCore) {
        self.port = port
        port.sendRightMade()
    }

    deinit { port.sendRightReleased() }
}

/// The one send-once right. Dies either used (a message was sent with it) or
/// unused, in which case the port gets a send-once notification.
@usableFromInline
package final class SendOnceToken: Sendable {
    package let port: PortCore
    private let used = Atomic<Bool>(false)

    package init(port: PortCore) {
        self.port = port
        port.sendOnceMade()
    }

    /// Marks the right used; returns false if it already was.
    package func markUsed() -> Bool {
        !used.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Marks the right unused again: a send that exported it failed and
    /// gave it back.
    package func markUnused() { used.store(false, ordering: .releasing) }

    deinit { port.sendOnceReleased(used: used.load(ordering: .acquiring)) }
}

/// The one receive right. When it dies the port is destroyed, unless a
/// port-destroyed notification hands the right on instead.
@usableFromInline
package final class ReceiveRightToken: Sendable {
    package let port: PortCore

    package init(port: PortCore) { self.port = port }

    deinit { port.receiveRightReleased() }
}

/// A right as it sits inside a message.
@usableFromInline
package enum CarriedRight: Sendable {
    case send(SendRightToken)
    case sendOnce(SendOnceToken)
    case receive(ReceiveRightToken)
    /// The receiver took the right out; the slot stays so indices do not move.
    case taken

    package var kind: CarriedRightKind {
        switch self {
        case .send: .send
        case .sendOnce: .sendOnce
        case .receive: .receive
        case .taken: .taken
        }
    }
}

/// The kind of a right carried in a message, or `taken` once extracted.
public enum CarriedRightKind: Hashable, Sendable {
    /// A send right (Mach: `MACH_MSG_TYPE_PORT_SEND`).
    case send
    /// A send-once right (Mach: `MACH_MSG_TYPE_PORT_SEND_ONCE`).
    case sendOnce
    /// A receive right (Mach: `MACH_MSG_TYPE_PORT_RECEIVE`).
    case receive
    /// The right was already taken out of the message.
    case taken
}
