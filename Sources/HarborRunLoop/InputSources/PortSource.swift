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
public final class PortSource: Sendable, CustomStringConvertible, WaitsetSource {
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
    /// **CF equivalent:** `mach_port_insert_right(…, CFMachPortGetPort(port), MACH_MSG_TYPE_MAKE_SEND)`.
    public func makeSendRight() -> SendRight { receive.makeSendRight() }

    /// A send-once right to the port: a reply right to hand out with a
    /// request, or the target of a notification request, whose one message
    /// this source's handler gets like any other (on the loop's thread).
    /// **CF equivalent:** `MACH_MSG_TYPE_MAKE_SEND_ONCE` on `CFMachPortGetPort(port)`.
    public func makeSendOnceRight() -> SendOnceRight { receive.makeSendOnceRight() }

    /// Asks for a no-senders notification about this source's port, sent
    /// to `target` when the number of send rights to the port next drops to
    /// zero; replaces an earlier request. Any thread, also while the source
    /// is on a loop.
    /// **CF equivalent:** `mach_port_request_notification(…, CFMachPortGetPort(port), MACH_NOTIFY_NO_SENDERS, …)`.
    public func requestNoSendersNotification(to target: consuming SendOnceRight) {
        receive.requestNoSendersNotification(to: target)
    }

    /// Asks for a port-destroyed notification about this source's port:
    /// when the source is released, its receive right travels to `target`
    /// in the notification, queue intact, instead of the port dying. Fires once.
    /// **CF equivalent:** `mach_port_request_notification(…, MACH_NOTIFY_PORT_DESTROYED, …)`.
    public func requestPortDestroyedNotification(to target: consuming SendOnceRight) {
        receive.requestPortDestroyedNotification(to: target)
    }

    /// The port's name.
    public var portName: PortName { receive.name }

    /// False once ``invalidate()`` ran.
    public var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Removes the source from every mode of every loop it is in. The port
    /// itself dies when the last reference to the source goes.
    /// CF: `CFRunLoopSourceInvalidate`.
    public func invalidate() {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return }
        leaveEveryLoop()
    }

    /// Takes the next waiting message, if any.
    func takeMessage() -> Message? { receive.tryReceive() }

    /// Makes the port's readiness descriptor stop polling readable if its
    /// queue is empty (after a wake-up that found nothing).
    func clearSpuriousReadiness() { receive.core.clearSpuriousReadiness() }

    var waitDescriptor: CInt { readinessDescriptor }
    var waitEvents: EpollEvents { .readable }

    /// Serves a ready port: up to ``batchLimit`` messages, one handler call
    /// each. Returns whether a message was handled. A port invalidated or
    /// gone from the mode since its event was queued is skipped.
    func serve(_ events: EpollEvents, on loop: Loop, in mode: ModeState) -> Bool {
        var handled = false
        for _ in 0..<Self.batchLimit {
            guard isServed(by: loop, in: mode), let message = takeMessage() else { break }
            Callout.port(self, message)
            handled = true
        }
        // Readable with nothing to take (a nudge, or a write that raced a
        // receive): clear it, or the level-triggered waitset wakes us again.
        if !handled && isValid { clearSpuriousReadiness() }
        return handled
    }

    public var description: String {
        "PortSource(\(receive.name), fd: \(readinessDescriptor), queued: \(receive.status.queuedMessages), order: \(order))"
    }
}

extension Loop {
    /// Adds a port source to `mode`; from then on the port wakes the loop by
    /// itself. A port source may be in several loops at once: each wakes
    /// for its messages and the first to look takes them. Any thread.
    /// **CF equivalent:** `CFRunLoopAddSource` (version 1),
    /// `-[NSRunLoop addPort:forMode:]`.
    public func add(_ source: PortSource, forMode mode: LoopMode) { add(.waitset(source), to: mode) }
    /// Removes the port source from `mode` only. **CF equivalent:** `-[NSRunLoop removePort:forMode:]`.
    public func remove(_ source: PortSource, forMode mode: LoopMode) { remove(.waitset(source), from: mode) }
    /// Whether the port source is in `mode`.
    public func contains(_ source: PortSource, inMode mode: LoopMode) -> Bool { contains(.waitset(source), mode) }
}

extension Callout {
    /// A port source's handler (CF's
    /// `__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION__`).
    @inline(never)
    static func port(_ port: PortSource, _ message: consuming Message) {
        port.handler(port, message)
    }
}
