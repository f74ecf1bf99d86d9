// Harbor — C01, C02: values written into one message one at a time and read back one at a time.
import HarborCoding
import HarborPorts
import HarborTestSupport
import Testing

@Suite(.deadline(.seconds(60)))
struct ValueSequenceTests {
    @Test func C01_C02_valuesWrittenOneAtATimeAreReadOneAtATimeWithTheirRights() throws {
        let events = ReceiveRight()
        let answers = ReceiveRight()
        var writer = MessageValueWriter()
        try writer.append("subscribe")
        try writer.append(Order.sample)
        try writer.append(events.makeSendRight())
        try writer.append(SendOnceRightCarrier(answers.makeSendOnceRight()))
        #expect(writer.count == 4)
        var message = try writer.message(id: 12)
        message.setReplyRight(answers.makeSendOnceRight())

        var reader = try MessageValueReader(message)
        let count = reader.count
        #expect(count == 4)
        let method = try reader.next(String.self)
        #expect(method == "subscribe")
        let order = try reader.next(Order.self)
        #expect(order == Order.sample)
        let send = try reader.next(SendRight.self)
        let once = try reader.next(SendOnceRightCarrier.self)
        let atEnd = reader.isAtEnd
        #expect(atEnd)
        do {
            _ = try reader.next(Int.self)
            Issue.record("read a value past the last")
        } catch {
            #expect(error.code == .valueNotFound)
        }
        var rest = reader.finish()
        let (kinds, hasReply) = (rest.carriedRights, rest.hasReplyRight)
        #expect(kinds == [.taken, .taken], "the rights the values took are taken out of the message")
        #expect(hasReply, "the reply right stays")

        try send.send(Message(id: 1, text: "event"))
        let event = try events.receive(timeout: .seconds(5)).text
        #expect(event == "event")
        try once.take().send(Message(id: 2))
        try rest.reply(Message(id: 3))
        let answerIDs = [try answers.receive(timeout: .seconds(5)).id, try answers.receive(timeout: .seconds(5)).id]
        #expect(answerIDs.sorted() == [2, 3])
    }

    @Test func C04_aReaderRefusesABodyThatIsNotASequenceOfValues() throws {
        let single = try MessageEncoder().encode("one value", id: 1)
        do {
            _ = try MessageValueReader(single)
            Issue.record("read a single value as a sequence")
        } catch {
            #expect(error.code == .typeMismatch)
        }
        do {
            _ = try MessageValueReader(Message(id: 1, body: [1, 0x09, 5, 0]))
            Issue.record("read a truncated sequence")
        } catch {
            #expect(error.code == .malformedBody)
        }
    }
}
