// Harbor — C03: a Codable message's rights and region work in another process.
import Glibc
import Harbor
import HarborCoding
import HarborPeerCommands
import HarborTestSupport
import SystemPackage
import Testing

@Suite(.serialized, .deadline(.seconds(120)))
struct CodedMessageTests {
    /// What harbor-peer's `coded` command decodes (Sources/harbor-peer/Coded.swift).
    struct Delivery: Codable {
        var note: String
        var reportTo: SendRight
        var inbox: ReceiveRightCarrier
        var answer: SendOnceRightCarrier
        var payload: MemoryRegion
    }

    /// What it answers.
    struct Report: Codable {
        var pid: Int32
        var note: String
        var received: [String]
        var regionCount: Int
        var regionSum: UInt32
    }

    @Test func C03_P07_aSendARightAReceiveRightAndARegionAsCodableFieldsEachWorkInAnotherProcess() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let reports = ReceiveRight()
            let answers = ReceiveRight()
            let inbox = ReceiveRight()
            let inboxSender = inbox.makeSendRight()
            try inboxSender.send(Message(id: 1, text: "queued before the move"))
            var buffer = try OutOfLineBuffer(count: 1 << 20)
            var expected: UInt32 = 0
            buffer.withUnsafeMutableBytes { bytes in
                for index in stride(from: 0, to: bytes.count, by: 4096) {
                    bytes[index] = UInt8(truncatingIfNeeded: index >> 12 | 1)
                    expected &+= UInt32(bytes[index])
                }
            }
            let delivery = Delivery(
                note: "coded", reportTo: reports.makeSendRight(), inbox: ReceiveRightCarrier(inbox),
                answer: SendOnceRightCarrier(answers.makeSendOnceRight()), payload: try MemoryRegion(sealing: buffer))
            try peer.port.send(MessageEncoder().encode(delivery, id: PeerCommand.coded))
            // The port now lives in the peer: what is sent to it now is received there.
            try inboxSender.send(Message(id: 1, text: "sent after the move"))

            let used = try reports.receive(timeout: .seconds(30))
            #expect(used.id == PeerCommand.used)
            #expect(used.text == "used by \(peer.pid)", "the send right reached this process from the peer")
            var answer = try answers.receive(timeout: .seconds(30))
            let (answerID, answerSender) = (answer.id, answer.trailer.sender.pid)
            #expect(answerID == PeerCommand.coded, "the send-once right answered")
            #expect(answerSender == peer.pid)
            let report = try MessageDecoder().decode(Report.self, from: &answer)
            #expect(report.pid == peer.pid)
            #expect(report.note == "coded")
            #expect(report.received == ["queued before the move", "sent after the move"],
                    "the receive right moved with its queue and receives in the peer")
            #expect(report.regionCount == 1 << 20 && report.regionSum == expected, "the region's bytes, read there")
            peer.stop()
            // The peer dropped the moved receive right when it was done: the port died there.
            #expect(throws: PortError.self) { try inboxSender.send(Message(id: 1), timeout: .seconds(5)) }
        }
    }

    /// What harbor-peer's `codedFile` command decodes (Sources/harbor-peer/Coded.swift).
    struct FileDelivery: Codable {
        var note: String
        var reportTo: SendRight
        var inbox: ReceiveRightCarrier
        var output: FileDescriptorCarrier
        var answer: SendOnceRightCarrier
    }

    /// What it answers.
    struct FileReport: Codable {
        var pid: Int32
        var received: [String]
    }

    @Test func C07_P07_aSendRightAReceiveRightAndAFileAsCodableFieldsEachWorkInAnotherProcess() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            // Made after the spawn: swift-system's pipe is not close-on-exec.
            let pipe = try FileDescriptor.pipe()
            defer { try? pipe.readEnd.close() }
            let reports = ReceiveRight()
            let answers = ReceiveRight()
            let inbox = ReceiveRight()
            let inboxSender = inbox.makeSendRight()
            let delivery = FileDelivery(
                note: "file", reportTo: reports.makeSendRight(), inbox: ReceiveRightCarrier(inbox),
                output: FileDescriptorCarrier(taking: pipe.writeEnd),
                answer: SendOnceRightCarrier(answers.makeSendOnceRight()))
            try peer.port.send(MessageEncoder().encode(delivery, id: PeerCommand.codedFile))
            // Only the peer holds the write end now: the carrier's and the message's copies are gone.
            try delivery.output.take().close()
            try inboxSender.send(Message(id: 1, text: "sent after the move"))

            let used = try reports.receive(timeout: .seconds(30))
            #expect(used.id == PeerCommand.used)
            #expect(used.text == "used by \(peer.pid)", "the send right reached this process from the peer")
            var answer = try answers.receive(timeout: .seconds(30))
            #expect(answer.id == PeerCommand.codedFile, "the send-once right answered")
            let report = try MessageDecoder().decode(FileReport.self, from: &answer)
            #expect(report.pid == peer.pid)
            #expect(report.received == ["sent after the move"], "the receive right moved and receives in the peer")
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = try buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) }
            #expect(String(decoding: buffer[..<count], as: UTF8.self) == "written by \(peer.pid)",
                    "the peer wrote through the file it received")
            peer.stop()
            // The peer closed its end and exited: no write end is open anywhere.
            #expect(try buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) } == 0)
        }
    }

    @Test func C07_P07_filesQueuedInAMovedReceiveRightMoveWithIt() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let pipe = try FileDescriptor.pipe()
            defer { try? pipe.readEnd.close() }
            let moving = ReceiveRight()
            for text in ["one;", "two;"] {
                var queued = Message(id: 1, text: text)
                try queued.attach(pipe.writeEnd)
                try moving.makeSendRight().send(queued)
            }
            try pipe.writeEnd.close()
            var drain = Message(id: PeerCommand.drainFiles)
            drain.attach(moving)
            let reply = try request(peer.port, drain, timeout: .seconds(30))
            #expect(reply.text == "written=2", "the queue moved with its files, and the peer wrote through each")
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = try buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) }
            #expect(String(decoding: buffer[..<count], as: UTF8.self) == "one;two;")
            peer.stop()
            #expect(try buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) } == 0,
                    "no copy of the write end is left, here or there")
        }
    }
}
