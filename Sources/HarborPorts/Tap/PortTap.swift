// Harbor — a tap on a port: a record of each message its queue admits (Docs/Capture.md).
import HarborSystem

/// Records every message a port admits to its queue, for monitors and
/// captures (`harbor monitor`, `harbor capture`): a ``PortCaptureRecord``
/// of each, in admission order, whether a thread of this process sent it or
/// it arrived from another process (and whether it was queued or handed
/// straight to a waiting receiver).
///
/// Made by ``ReceiveRight/tap(bodyPrefix:capacity:)``, so only the holder
/// of a port's receive right can tap it. Armed from then until
/// ``cancel()``, or until the handle goes (its `deinit` cancels). A port
/// may have several taps; each sees every admission.
///
/// A tap never slows admission down to its reader's pace: it holds at most
/// `capacity` records, and a message admitted while it is full is counted
/// as dropped (``dropped``; the next record's
/// ``PortCaptureRecord/droppedBefore`` and the gap in
/// ``PortCaptureRecord/index`` say where). A port with no tap pays one nil
/// check per admission.
///
/// What the tap sees is what this process admits: once the receive right
/// moves to another process, nothing more is recorded here. When the port
/// dies the tap ends: ``next(timeout:)`` returns what is left, then nil.
///
/// **Thread safety:** any thread; one reader at a time is the usual use
/// (several share the records between them).
public final class PortTap: Sendable {
    /// The most body bytes a record may copy.
    public static let maximumBodyPrefix = 65_536
    /// The most records a tap may hold.
    public static let maximumCapacity = 1 << 20

    private let port: PortCore
    private let buffer: PortTapBuffer

    package init(port: PortCore, buffer: PortTapBuffer) {
        self.port = port
        self.buffer = buffer
    }

    deinit { cancel() }

    /// The tapped port.
    public var portName: PortName { port.name }

    /// The most body bytes each record copies.
    public var bodyPrefix: Int { buffer.prefix }

    /// The most records held for the reader before admissions are dropped.
    public var capacity: Int { buffer.capacity }

    /// The next record, waiting up to `timeout` for one (`nil` waits as long
    /// as it takes, `.zero` only looks). Nil when none came in time, or the
    /// tap ended (cancelled, or its port died) and every record was read.
    public func next(timeout: Duration? = nil) -> PortCaptureRecord? {
        buffer.take(atMost: 1, until: WaitDeadline(timeout: timeout)).first
    }

    /// Up to `limit` records, waiting up to `timeout` for the first; empty
    /// when none came in time or the tap ended with nothing left.
    public func records(atMost limit: Int = .max, timeout: Duration? = .zero) -> [PortCaptureRecord] {
        buffer.take(atMost: max(1, limit), until: WaitDeadline(timeout: timeout))
    }

    /// Messages the port admitted while the tap was armed, recorded or dropped.
    public var admitted: UInt64 { buffer.counts.admitted }

    /// Admitted messages the tap had no room to record (its reader too slow).
    public var dropped: UInt64 { buffer.counts.dropped }

    /// Whether the tap still records: not cancelled, and its port alive.
    public var isArmed: Bool { !buffer.counts.ended }

    /// Disarms the tap: the port stops recording into it at once. Records
    /// already made can still be read. Calling it again does nothing.
    public func cancel() {
        port.removeTap(buffer)
        buffer.end()
    }
}
