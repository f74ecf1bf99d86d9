// Harbor — C02, C05, C06: rights and regions as Codable fields, carried as real rights.
import Foundation
import HarborCoding
import HarborPorts
import HarborTestSupport
import Testing

@Suite(.deadline(.seconds(60)))
struct RightFieldTests {
    @Test func C02_rightsAndARegionTravelAsCarriedRightsAndWorkAfterDecoding() throws {
        let reports = ReceiveRight()
        let inbox = ReceiveRight()
        let inboxSender = inbox.makeSendRight()
        try inboxSender.send(Message(id: 5, text: "queued before the move"))
        let answers = ReceiveRight()
        var buffer = try OutOfLineBuffer(count: 4096)
        buffer.withUnsafeMutableBytes { $0[4095] = 0xAB }
        let extra = ReceiveRight()
        let request = Handover(
            note: "over", reportTo: reports.makeSendRight(), inbox: ReceiveRightCarrier(inbox),
            answer: SendOnceRightCarrier(answers.makeSendOnceRight()), payload: try MemoryRegion(sealing: buffer),
            extra: [extra.makeSendRight(), extra.makeSendRight()])

        let service = ReceiveRight()
        var sent = try MessageEncoder().encode(request, id: 77)
        let (kinds, regionCount, body) = (sent.carriedRights, sent.regions.count, sent.body)
        #expect(kinds == [.send, .receive, .sendOnce, .send, .send])
        #expect(regionCount == 1)
        #expect(!body.contains(0xAB), "the region's bytes are not in the body")
        sent.setReplyRight(answers.makeSendOnceRight())
        #expect(request.inbox.isTaken && request.answer.isTaken, "encoding moved the rights into the message")
        try service.makeSendRight().send(sent)

        var received = try service.receive(timeout: .seconds(5))
        let decoded = try MessageDecoder().decode(Handover.self, from: &received)
        let (left, replyLeft) = (received.carriedRights, received.hasReplyRight)
        #expect(left == [.taken, .taken, .taken, .taken, .taken])
        #expect(replyLeft, "decoding leaves the reply right in the message")

        #expect(decoded.note == "over")
        try decoded.reportTo.send(Message(id: 1, text: "report"))
        let report = try reports.receive(timeout: .seconds(5)).text
        #expect(report == "report")
        let moved = try decoded.inbox.take()
        #expect(moved.name == inboxSender.name)
        let queued = try moved.receive(timeout: .zero).text
        #expect(queued == "queued before the move")
        try decoded.answer.take().send(Message(id: 2, text: "answer"))
        let answer = try answers.receive(timeout: .seconds(5)).text
        #expect(answer == "answer")
        #expect(decoded.payload.count == 4096 && decoded.payload.withUnsafeBytes { $0[4095] } == 0xAB)
        #expect(decoded.extra.map(\.name) == [extra.name, extra.name])
    }

    @Test func C05_aCarrierGivesItsRightOnceAndATypedErrorAfter() throws {
        let port = ReceiveRight()
        let carrier = SendOnceRightCarrier(port.makeSendOnceRight())
        let right = try carrier.take()
        #expect(carrier.isTaken)
        expectCodingError(.rightAlreadyTaken) { _ = try carrier.take() }
        expectCodingError(.rightAlreadyTaken) {
            _ = try MessageEncoder().encode([carrier], id: 1)
        }
        try right.send(Message(id: 3))
        let receive = ReceiveRightCarrier(ReceiveRight())
        expectCodingError(.rightAlreadyTaken) {
            _ = try MessageEncoder().encode([receive, receive], id: 1)
        }
        #expect(!receive.isTaken, "a refused encoding leaves the carrier its right")
    }

    @Test func C05_aFailedEncodingLeavesEveryCarrierItsRight() throws {
        struct Late: Encodable {
            let first: ReceiveRightCarrier
            let second: SendOnceRightCarrier
            func encode(to encoder: any Encoder) throws {
                var container = encoder.unkeyedContainer()
                try container.encode(first)
                try container.encode(second)
                throw CancellationError()
            }
        }
        let port = ReceiveRight()
        let value = Late(first: ReceiveRightCarrier(ReceiveRight()), second: SendOnceRightCarrier(port.makeSendOnceRight()))
        do {
            _ = try MessageEncoder().encode(value, id: 1)
            Issue.record("encoded a value that threw")
        } catch {
            #expect(error.code == .invalidValue)
            #expect(error.underlying is CancellationError)
        }
        #expect(!value.first.isTaken && !value.second.isTaken)
        let notified = port.tryReceive() != nil
        #expect(!notified, "no send-once notification: the right is still held")
    }

    @Test func C05_aDecodedRightCannotBeTakenTwiceFromOneMessage() throws {
        /// Decodes the same send right twice from one keyed container.
        struct Greedy: Decodable {
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: Key.self)
                _ = try container.decode(SendRight.self, forKey: .right)
                _ = try container.decode(SendRight.self, forKey: .right)
            }
            enum Key: CodingKey { case right }
        }
        struct One: Encodable { var right: SendRight }
        let port = ReceiveRight()
        var message = try MessageEncoder().encode(One(right: port.makeSendRight()), id: 1)
        expectCodingError(.invalidRightIndex) {
            _ = try MessageDecoder().decode(Greedy.self, from: &message)
        }
    }

    @Test func C06_anotherEncoderGetsATypedErrorForARight() throws {
        let port = ReceiveRight()
        expectCodingError(.invalidValue) {
            _ = try JSONEncoder().encode([port.makeSendRight()])
        }
        // PropertyListEncoder wraps what the value threw in its own EncodingError.
        let wrapped = #expect(throws: EncodingError.self) {
            _ = try PropertyListEncoder().encode([ReceiveRightCarrier(ReceiveRight())])
        }
        #expect("\(wrapped.map { $0 } as Any)".contains("can be encoded only by a MessageEncoder"))
        expectCodingError(.typeMismatch) {
            _ = try JSONDecoder().decode([SendRight].self, from: Data("[0]".utf8))
        }
    }

    @Test func C02_manyRightsAndRegionsStopAtTheMessageLimits() throws {
        let port = ReceiveRight()
        let rights = Array(repeating: port.makeSendRight(), count: MessageCodingFormat.maximumRights)
        let carried = try MessageEncoder().encode(rights, id: 1).carriedRights
        #expect(carried.count == MessageCodingFormat.maximumRights)
        expectCodingError(.limitExceeded) {
            _ = try MessageEncoder().encode(rights + [port.makeSendRight()], id: 1)
        }
        let region = try [UInt8](repeating: 1, count: 10).withUnsafeBytes { bytes throws(PortError) in
            try MemoryRegion(copying: bytes)
        }
        expectCodingError(.limitExceeded) {
            _ = try MessageEncoder().encode(Array(repeating: region, count: MessageCodingFormat.maximumRegions + 1), id: 1)
        }
        var regions = try MessageEncoder().encode(Array(repeating: region, count: 3), id: 1)
        let back = try MessageDecoder().decode([MemoryRegion].self, from: &regions)
        #expect(back.map(\.bytes) == Array(repeating: [UInt8](repeating: 1, count: 10), count: 3))
    }
}
