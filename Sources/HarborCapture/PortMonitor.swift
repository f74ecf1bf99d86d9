// Harbor — a tap's records forwarded as messages to a monitor's port: what
// a name's holder runs for `harbor monitor` / `harbor capture` once the
// CLI reaches it (Docs/Capture.md, "Forwarding").
import HarborPorts
import HarborSystem
import Synchronization

/// Sends a `PortTap`'s records (HarborPorts) to another port (a monitor's, in this
/// process or another), batched into messages, without ever waiting for
/// the monitor: a batch its queue has no room for is dropped and its
/// records counted (``lost``), as the tap itself drops what its reader is
/// too slow for.
///
/// Call ``forward(timeout:)`` in a loop on a thread of the tapped process;
/// it returns false once the tap ended or the monitor's port died, after
/// sending the closing summary (``summaryID``) when it still can.
/// The monitor reads batches with ``records(in:)`` and the summary with
/// ``summary(in:)``.
///
/// **Thread safety:** any thread; one forwarding thread at a time.
public final class PortMonitor: Sendable {
    /// The id of a message carrying records: each as a 4-byte little-endian
    /// length, an 8-byte wall time (ns), then the ``CaptureRecordFormat`` record.
    public static let recordsID: Int32 = 0x4843_5001
    /// The id of the closing summary: three little-endian u64s, messages
    /// the port admitted while tapped, records the tap dropped, records
    /// lost on the way to the monitor.
    public static let summaryID: Int32 = 0x4843_5002

    private let tap: PortTap
    private let destination: SendRight
    private let sent = Atomic<UInt64>(0)
    private let dropped = Atomic<UInt64>(0)
    private let finished = Atomic<Bool>(false)

    /// Forwards `tap`'s records to `destination`.
    public init(tap: PortTap, sendingTo destination: SendRight) {
        self.tap = tap
        self.destination = destination
    }

    /// Records delivered to the monitor's queue so far.
    public var forwarded: UInt64 { sent.load(ordering: .relaxed) }

    /// Records lost because the monitor's queue was full.
    public var lost: UInt64 { dropped.load(ordering: .relaxed) }

    /// Waits up to `timeout` for records, then sends all the tap holds in
    /// messages of at most `Message.maximumBodySize` bytes, each tried
    /// once. False when forwarding is over: the tap ended (cancelled, or
    /// its port died; the summary is sent) or the monitor's port is gone.
    public func forward(timeout: Duration? = .seconds(1)) -> Bool {
        if finished.load(ordering: .acquiring) { return false }
        let records = tap.records(timeout: timeout)
        var batch: [UInt8] = []
        var count = 0
        for record in records {
            let entry = Self.entry(record)
            if batch.count + entry.count > Message.maximumBodySize {
                guard send(batch, count: count) else { return stop() }
                batch = []
                count = 0
            }
            batch += entry
            count += 1
        }
        if count > 0, !send(batch, count: count) { return stop() }
        if records.isEmpty, !tap.isArmed { return finish() }
        return true
    }

    /// Sends the closing summary now (once), and stops forwarding.
    @discardableResult
    public func finish() -> Bool {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        var body: [UInt8] = []
        CaptureRecordFormat.append(tap.admitted, to: &body)
        CaptureRecordFormat.append(tap.dropped, to: &body)
        CaptureRecordFormat.append(lost, to: &body)
        try? destination.send(Message(id: Self.summaryID, body: body), timeout: .zero)
        return false
    }

    private func stop() -> Bool {
        finished.store(true, ordering: .releasing)
        return false
    }

    /// Sends one batch; false only when the monitor's port is gone.
    private func send(_ batch: [UInt8], count: Int) -> Bool {
        do {
            try destination.send(Message(id: Self.recordsID, body: batch), timeout: .zero)
            sent.add(UInt64(count), ordering: .relaxed)
            return true
        } catch where error.code == .deadName {
            return false
        } catch {
            dropped.add(UInt64(count), ordering: .relaxed)
            return true
        }
    }

    /// One record's entry in a batch; a prefix too long to fit a message
    /// is cut (the record keeps the body's real size).
    static func entry(_ record: PortCaptureRecord) -> [UInt8] {
        var record = record
        let room = Message.maximumBodySize - 12 - CaptureRecordFormat.headerLength
            - 8 * min(record.regionSizes.count, CaptureRecordFormat.maximumListedRegions)
        if record.bodyPrefix.count > room { record.bodyPrefix = Array(record.bodyPrefix.prefix(room)) }
        let bytes = CaptureRecordFormat.encode(record)
        var entry: [UInt8] = []
        entry.reserveCapacity(12 + bytes.count)
        CaptureRecordFormat.append(UInt32(bytes.count), to: &entry)
        CaptureRecordFormat.append(UInt64(bitPattern: record.wallNanoseconds), to: &entry)
        return entry + bytes
    }

    /// The records a ``recordsID`` message carries.
    /// - Throws: ``CaptureFormatError`` for a body that is not such a batch.
    public static func records(in message: borrowing Message) throws(CaptureFormatError) -> [PortCaptureRecord] {
        guard message.id == recordsID else { throw CaptureFormatError("message id \(message.id) is not a record batch") }
        let body = message.body
        var records: [PortCaptureRecord] = []
        var offset = 0
        while offset < body.count {
            guard body.count - offset >= 12 else { throw CaptureFormatError("a record batch ends inside an entry") }
            let reader = LittleEndianReader(Array(body[offset..<offset + 12]))
            let length = Int(reader.u32(at: 0))
            guard body.count - offset - 12 >= length else { throw CaptureFormatError("a record batch ends inside a record") }
            let start = offset + 12
            records.append(try CaptureRecordFormat.decode(Array(body[start..<start + length]),
                                                          wallNanoseconds: Int64(bitPattern: reader.u64(at: 4))))
            offset = start + length
        }
        return records
    }

    /// What a ``summaryID`` message says, nil for any other message.
    public static func summary(in message: borrowing Message) -> (admitted: UInt64, dropped: UInt64, lost: UInt64)? {
        let body = message.body
        guard message.id == summaryID, body.count == 24 else { return nil }
        let reader = LittleEndianReader(body)
        return (reader.u64(at: 0), reader.u64(at: 8), reader.u64(at: 16))
    }
}
