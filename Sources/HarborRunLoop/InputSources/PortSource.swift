// Harbor — port sources: a receive right the loop watches (CF's "version 1").
import HarborPorts
import Synchronization
import HarborSystem

/// A port scheduled on a run loop: the loop wakes by itself when a message
/// arrives and calls the handler with each message.
///
/// The source owns the port's receive right (moved into it), so the port
/// lives exactly as long as the source: when the source is invalidated and
/// released, the port dies and its senders see a dead name. Adding the
/// source to a mode is what keeps a worker thread's loop alive (the
/// `addPort:forMode:` idiom).
///
/// The port's readiness descriptor (readable exactly while a message waits)
/// sits, level-triggered, in the epoll set of every mode the source is in.
/// On readiness the loop takes up to ``batchLimit`` messages and calls the
/// handler once per message; receiving counts as "handled source".
///
/// **Cost:** one descriptor per port (made at creation); per message, one
/// lock to dequeue and no system call beyond the port's own readiness flag.
/// **Thread safety:** any thread; the handler runs on the loop's thread with
/// no lock held.
/// **CF equivalent:** `CFMachPortCreateRunLoopSource`, `NSPort`'s
/// `addPort:forMode:` with `handleMachMessage:`.
public final class PortSource: Sendable, CustomStringConvertible {
    /// At most this many messages are handled per wake-up, so one busy port
    /// cannot starve the loop's other sources.
    public static let batchLimit = 16

    /// Lower orders are served first when several ports are ready at once.
    public let order: Int
    let receive: ReceiveRight
    let readinessDescriptor: CInt
    let handler: @Sendable (PortSource, consuming Message) -> Void
    let membership = HarborLock(Memberships())
    private let valid = Atomic(true)

    /// Moves `receive` into a new source whose handler gets every message.
    /// - Throws: `PortError.Code.resourceShortage` if the port's readiness
    ///   descriptor cannot be made.
    public convenience init(
        _ receive: consuming ReceiveRight, order: Int = 0,
        _ handler: @escaping @Sendable (consuming Message) -> Void
    ) throws(PortError) {
        try self.init(receive, order: order) { _, message in handler(message) }
    }

    /// Moves `receive` into a new source whose handler gets the source and
    /// every message, as CF's `CFMachPortCallBack` gets its port: it can
    /// invalidate itself with no box filled in after creation.
    /// - Throws: `PortError.Code.resourceShortage` if the port's readiness
    ///   descriptor cannot be made.
    public init(
        _ receive: consuming ReceiveRight, order: Int = 0,
        _ handler: @escaping @Sendable (PortSource, consuming Message) -> Void
    ) throws(PortError) {
        self.readinessDescriptor = try receive.core.readinessDescriptor()
        self.receive = receive
        self.order = order
        self.handler = handler
    }

    /// A send right to the port, for whoever should send to this source.
    public func makeSendRight() -> SendRight { receive.makeSendRight() }

    /// The port's name.
    public var portName: PortName { receive.name }

    /// False once ``invalidate()`` ran.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes the source from every mode of every loop it is in. The port
    /// itself dies when the last reference to the source goes.
    /// CF: `CFRunLoopSourceInvalidate`.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        for loop in membership.withLock({ $0.loops }) { loop.removeEverywhere(.port(self)) }
    }

    /// Takes the next waiting message, if any.
    func takeMessage() -> Message? { receive.tryReceive() }

    /// Makes the port's readiness descriptor stop polling readable if its
    /// queue is empty (after a wake-up that found nothing).
    func clearSpuriousReadiness() { receive.core.clearSpuriousReadiness() }

    public var description: String {
        "PortSource(\(receive.name), fd: \(readinessDescriptor), queued: \(receive.status.queuedMessages), order: \(order))"
    }
}
