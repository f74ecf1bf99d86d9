// Harbor — O09: a tap records each message its port admits, costs nothing
// unarmed, never blocks admission, and its records survive the capture
// format (CaptureRecordFormat) whatever they hold.
import Glibc
import HarborCapture
import HarborTestSupport
import Testing
@testable import HarborPorts
import HarborSystem

@Suite(.deadline) struct PortTapTests {
    @Test func O09_aTapRecordsEachAdmissionWithItsRightsSizesSenderAndDepth() throws {
        let port = ReceiveRight()
        try port.setQueueLimit(16)
        let tap = try port.tap(bodyPrefix: 4)
        let sender = port.makeSendRight()
        let other = ReceiveRight()
        try sender.send(Message(id: 1, text: "hello, world"))
        var carrying = Message(id: 2, body: [0, 0xFF, 0x80])
        carrying.attach(other.makeSendRight())
        carrying.attach(other.makeSendRight())
        carrying.attach(other.makeSendOnceRight())
        carrying.setReplyRight(other.makeSendOnceRight())
        try sender.send(carrying)
        try port.makeSendOnceRight().send(Message(id: 3))
        var withRegion = Message(id: 4)
        var buffer = try OutOfLineBuffer(count: 10_000)
        buffer.withUnsafeMutableBytes { $0[0] = 1 }
        try withRegion.attach(buffer)
        try sender.send(withRegion)

        let records = tap.records()
        #expect(records.map(\.id) == [1, 2, 3, 4])
        #expect(records.map(\.index) == [1, 2, 3, 4])
        #expect(records.map(\.queueDepth) == [1, 2, 3, 4])
        #expect(records.allSatisfy { $0.port == port.name && $0.sender == ProcessIdentity.current })
        #expect(records[0].bodySize == 12 && records[0].bodyPrefix == Array("hell".utf8))
        #expect(records[1].bodyPrefix == [0, 0xFF, 0x80])
        #expect(records[1].sendRights == 2 && records[1].sendOnceRights == 1 && records[1].receiveRights == 0)
        #expect(records[1].replyRight == .sendOnce)
        #expect(records[0].countsAgainstLimit && !records[2].countsAgainstLimit, "a send-once message does not count")
        #expect(records[3].regionSizes.count == 1 && records[3].regionSizes[0] >= 10_000)
        #expect(records.allSatisfy { $0.wallNanoseconds > 1_700_000_000 * 1_000_000_000 })
        #expect(zip(records, records.dropFirst()).allSatisfy { $0.monotonicNanoseconds <= $1.monotonicNanoseconds })
        // The messages themselves are untouched: the tap only read them.
        let first = try port.receive(timeout: .zero)
        #expect(first.text == "hello, world")
        var second = try port.receive(timeout: .zero)
        _ = try second.takeSendRight(at: 0)
        #expect(tap.admitted == 4 && tap.dropped == 0)
    }

    @Test func O09_aFullTapCountsDropsAndNeverHoldsTheSenderBack() throws {
        let port = ReceiveRight()
        try port.setQueueLimit(64)
        let tap = try port.tap(capacity: 3)
        let sender = port.makeSendRight()
        // Nobody reads the tap: every send still goes through at once.
        for id in 0..<10 { try sender.send(Message(id: Int32(id)), timeout: .zero) }
        #expect(port.status.queuedMessages == 10)
        #expect(tap.admitted == 10 && tap.dropped == 7)
        #expect(tap.records().map(\.id) == [0, 1, 2])
        try sender.send(Message(id: 10), timeout: .zero)
        let next = tap.next(timeout: .zero)
        #expect(next?.id == 10 && next?.index == 11 && next?.droppedBefore == 7, "the gap is said where it is")
    }

    @Test func O09_aReaderWaitingOnTheTapWakesWhenItsPortAdmitsAMessage() throws {
        let box = PortBox()
        let tap = try box.port.tap()
        let sender = box.port.makeSendRight()
        let waiting = TestThread { () -> Int32? in (try? box.port.receive(timeout: .seconds(10)))?.id }
        // The tap's reader waits on another thread, and wakes on the record.
        let reader = TestThread { tap.next(timeout: .seconds(10)) }
        usleep(50_000)
        try sender.send(Message(id: 42))
        #expect(waiting.join() == 42)
        let record = reader.join()
        #expect(record?.id == 42)
        // A local send queues, then wakes the receiver (depth 1); one from
        // another process may go straight to it (depth 0: CaptureTests).
        #expect(record?.queueDepth == 1)
    }

    @Test func O09_aCancelledOrReleasedTapRecordsNothingAndTheOthersGoOn() throws {
        let port = ReceiveRight()
        let kept = try port.tap()
        var released: PortTap? = try port.tap()
        let cancelled = try port.tap()
        cancelled.cancel()
        #expect(!cancelled.isArmed)
        weak let gone = released
        released = nil
        #expect(gone == nil, "nothing but the handle holds a tap")
        try port.makeSendRight().send(Message(id: 7))
        #expect(kept.records().map(\.id) == [7])
        #expect(cancelled.records().isEmpty && cancelled.admitted == 0)
        kept.cancel()
        try port.makeSendRight().send(Message(id: 8))
        #expect(kept.records().isEmpty)
    }

    @Test func O09_theTapOfADeadPortEndsAfterItsLastRecord() throws {
        var port: ReceiveRight? = ReceiveRight()
        let tap = try port!.tap()
        try port!.makeSendRight().send(Message(id: 5))
        port = nil
        #expect(!tap.isArmed)
        #expect(tap.next(timeout: .seconds(5))?.id == 5)
        let start = ContinuousClock.now
        #expect(tap.next(timeout: .seconds(5)) == nil)
        #expect(ContinuousClock.now - start < .seconds(2), "an ended tap does not wait")
        #expect(throws: Never.self) { try ReceiveRight().tap(bodyPrefix: 0, capacity: 1) }
        #expect(throws: PortError.self) { try ReceiveRight().tap(bodyPrefix: -1) }
        #expect(throws: PortError.self) { try ReceiveRight().tap(capacity: 0) }
    }

    @Test func O09_notificationsAreRecordedAsSuch() throws {
        let port = ReceiveRight()
        let tap = try port.tap()
        let watched = ReceiveRight()
        watched.requestNoSendersNotification(to: port.makeSendOnceRight())
        var right: SendRight? = watched.makeSendRight()
        right = nil
        _ = right
        let record = tap.next(timeout: .seconds(5))
        #expect(record?.isNotification == true)
        #expect(record?.countsAgainstLimit == false)
    }

    @Test func O09_aPortMonitorForwardsRecordsAsMessagesAndNeverWaitsForTheMonitor() throws {
        let port = ReceiveRight()
        try port.setQueueLimit(1024)
        let tap = try port.tap(bodyPrefix: 65_536, capacity: 2048)
        let monitorPort = ReceiveRight()
        try monitorPort.setQueueLimit(2)
        let monitor = PortMonitor(tap: tap, sendingTo: monitorPort.makeSendRight())
        let sender = port.makeSendRight()
        try sender.send(Message(id: 1, text: "one"))
        try sender.send(Message(id: 2, body: [UInt8](repeating: 7, count: Message.maximumBodySize)))
        #expect(monitor.forward(timeout: .zero))
        var records: [PortCaptureRecord] = []
        while let message = monitorPort.tryReceive() { records += try PortMonitor.records(in: message) }
        #expect(records.map(\.id) == [1, 2])
        #expect(records[1].bodySize == Message.maximumBodySize && records[1].bodyPrefix.count < Message.maximumBodySize,
                "cut to fit one message")
        #expect(records[0].bodyPrefix == Array("one".utf8) && records[0].sender == ProcessIdentity.current)
        // A monitor that does not read: batches past its queue are lost, counted, and nobody waits.
        for round in 0..<4 {
            for id in 0..<300 { try sender.send(Message(id: Int32(id), body: [UInt8](repeating: 1, count: 200)), timeout: .zero) }
            #expect(monitor.forward(timeout: .zero), "round \(round)")
            while port.tryReceive() != nil {}
        }
        #expect(monitor.lost > 0 && monitor.forwarded + monitor.lost == 1202)
        while monitorPort.tryReceive() != nil {}
        tap.cancel()
        #expect(!monitor.forward(timeout: .zero))
        let summary = try monitorPort.receive(timeout: .seconds(1))
        let counts = PortMonitor.summary(in: summary)
        #expect(counts?.admitted == 1202 && counts?.dropped == 0 && counts?.lost == monitor.lost)
        #expect(throws: CaptureFormatError.self) { try PortMonitor.records(in: Message(id: PortMonitor.recordsID, body: [1, 2, 3])) }
    }

    /// Random records, hostile sizes included, encode and decode to themselves
    /// (counts saturated to their fields, region sizes listed up to the limit).
    @Test func O09_randomRecordsSurviveTheCaptureFormat() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            let record = randomRecord(round, using: &generator)
            let bytes = CaptureRecordFormat.encode(record)
            let decoded = try CaptureRecordFormat.decode(bytes, wallNanoseconds: record.wallNanoseconds)
            #expect(decoded == saturated(record), "round \(round)")
            #expect(bytes.count <= CaptureRecordFormat.headerLength + 8 * CaptureRecordFormat.maximumListedRegions
                        + record.bodyPrefix.count)
            // Any damage is a typed error, never a trap.
            var damaged = bytes
            damaged.removeLast(Int.random(in: 0...min(8, bytes.count), using: &generator))
            if damaged.count != bytes.count { #expect(throws: CaptureFormatError.self) { try CaptureRecordFormat.decode(damaged) } }
            #expect(throws: CaptureFormatError.self) { try CaptureRecordFormat.decode(Array(bytes.prefix(50))) }
        }
    }
}

/// A port both threads of a test reach.
final class PortBox: Sendable {
    let port = ReceiveRight()
}

/// A record with random ids, bytes, counts and identities; every tenth one
/// at the extremes (sizes past what any field holds).
func randomRecord(_ round: Int, using generator: inout SystemRandomNumberGenerator) -> PortCaptureRecord {
    let extreme = round % 10 == 0
    let prefix = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    func identity() -> ProcessIdentity {
        ProcessIdentity(pid: Int32.random(in: .min ... .max, using: &generator), uid: UInt32.random(in: 0...UInt32.max, using: &generator),
                        gid: UInt32.random(in: 0...UInt32.max, using: &generator))
    }
    let relayed = Bool.random(using: &generator)
    let regionCount = extreme ? Int.random(in: 0...200, using: &generator) : Int.random(in: 0...3, using: &generator)
    return PortCaptureRecord(
        index: UInt64.random(in: 0...UInt64.max, using: &generator), port: PortName(rawValue: UInt64.random(in: 0...UInt64.max, using: &generator)),
        monotonicNanoseconds: Int64.random(in: .min ... .max, using: &generator),
        wallNanoseconds: Int64.random(in: 0...Int64.max, using: &generator),
        id: Int32.random(in: .min ... .max, using: &generator),
        bodySize: extreme ? Int.max : prefix.count + Int.random(in: 0...100_000, using: &generator), bodyPrefix: prefix,
        sendRights: extreme ? Int.max : Int.random(in: 0...70_000, using: &generator),
        sendOnceRights: Int.random(in: 0...5, using: &generator), receiveRights: Int.random(in: 0...5, using: &generator),
        replyRight: [nil, .send, .sendOnce].randomElement(using: &generator)!,
        files: extreme ? Int.max : Int.random(in: 0...300, using: &generator),
        regionSizes: (0..<regionCount).map { _ in extreme ? Int.max : Int.random(in: 1...(1 << 40), using: &generator) },
        sender: identity(), relayedBy: relayed ? identity() : nil, claimedOriginalSender: relayed ? identity() : nil,
        isNotification: Bool.random(using: &generator), countsAgainstLimit: Bool.random(using: &generator),
        queueDepth: extreme ? Int.max : Int.random(in: 0...2048, using: &generator),
        droppedBefore: UInt64.random(in: 0...UInt64.max, using: &generator))
}

/// What decoding `record`'s bytes gives: counts saturated to their fields,
/// at most the listed region sizes.
func saturated(_ record: PortCaptureRecord) -> PortCaptureRecord {
    var expected = record
    expected.bodySize = Int(UInt32(clamping: record.bodySize))
    expected.sendRights = Int(UInt16(clamping: record.sendRights))
    expected.sendOnceRights = Int(UInt16(clamping: record.sendOnceRights))
    expected.receiveRights = Int(UInt16(clamping: record.receiveRights))
    expected.files = Int(UInt16(clamping: record.files))
    expected.queueDepth = Int(UInt32(clamping: record.queueDepth))
    expected.regionSizes = Array(record.regionSizes.prefix(CaptureRecordFormat.maximumListedRegions))
    return expected
}
