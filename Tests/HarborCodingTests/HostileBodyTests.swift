// Harbor — C04: a body from another process is hostile input: typed errors, bounded, never a trap.
import HarborCoding
import HarborPorts
import HarborTestSupport
import Testing

@Suite(.deadline(.seconds(60)))
struct HostileBodyTests {
    /// Decodes `body` as a `T` from a message carrying `rights` (built by `attach`).
    private func decode<T: Decodable>(
        _ type: T.Type, _ body: [UInt8], attach: (inout Message) -> Void = { _ in }
    ) throws(MessageCodingError) -> T {
        var message = Message(id: 1, body: body)
        attach(&message)
        return try MessageDecoder().decode(type, from: message)
    }

    private func expectRefusal<T: Decodable>(
        _ code: MessageCodingError.Code, _ type: T.Type, _ body: [UInt8],
        attach: (inout Message) -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try decode(type, body, attach: attach)
            Issue.record("decoded \(body.prefix(16)) as \(T.self)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func C04_everyTruncationOfAValidBodyIsATypedError() throws {
        let body = try MessageEncoder().encode(Order.sample, id: 1).body
        for length in 0..<body.count {
            do {
                _ = try decode(Order.self, Array(body[..<length]))
                Issue.record("a body cut at \(length) of \(body.count) bytes decoded")
            } catch {
                #expect([.malformedBody].contains(error.code), "\(error)")
            }
        }
        #expect(try decode(Order.self, body) == Order.sample)
    }

    @Test func C04_everySingleByteChangeIsDecodedOrRefusedWithATypedError() throws {
        // Not a proof (the fuzz target is), but every position and a few values.
        let body = try MessageEncoder().encode(Order.sample, id: 1).body
        for position in body.indices {
            for value: UInt8 in [0x00, 0x01, 0x0A, 0x7F, 0x80, 0xFF] {
                var changed = body
                changed[position] = value
                _ = try? decode(Order.self, changed)
            }
        }
    }

    @Test func C04_aVersionOtherThanOneIsRefused() {
        expectRefusal(.unsupportedVersion, Int.self, [2, 0x03, 0])
        expectRefusal(.unsupportedVersion, Int.self, [0])
        expectRefusal(.malformedBody, Int.self, [])
    }

    @Test func C04_malformedBytesAreRefused() {
        expectRefusal(.malformedBody, Int.self, [1, 0x42])                       // unknown tag
        expectRefusal(.malformedBody, Int.self, [1, 0x03, 0, 0])                 // bytes after the value
        expectRefusal(.malformedBody, UInt64.self, [1, 0x04] + [UInt8](repeating: 0xFF, count: 9) + [0x02])  // > 64 bits
        expectRefusal(.malformedBody, UInt64.self, [1, 0x04] + [UInt8](repeating: 0x80, count: 20))
        expectRefusal(.malformedBody, String.self, [1, 0x07, 3, 0xC3, 0x28, 0x41])  // not UTF-8
        expectRefusal(.malformedBody, [String: Int].self, [1, 0x0A, 1, 2, 0xFF, 0xFE, 0x00])  // a key not UTF-8
        expectRefusal(.malformedBody, [String: Int].self, [1, 0x0A, 2, 1, 0x61, 0x03, 0, 1, 0x61, 0x03, 2])  // "a" twice
        expectRefusal(.malformedBody, Double.self, [1, 0x06, 0, 0, 0])          // eight bytes promised
    }

    @Test func C04_lengthsAndCountsAreCheckedBeforeAnythingIsReserved() {
        // A claimed length or count far past the body's end: refused at once,
        // with nothing allocated for it.
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        expectRefusal(.malformedBody, String.self, [1, 0x07] + huge)
        expectRefusal(.malformedBody, [UInt8].self, [1, 0x08] + huge)
        expectRefusal(.malformedBody, [Int].self, [1, 0x09] + huge)
        expectRefusal(.malformedBody, [String: Int].self, [1, 0x0A] + huge)
        expectRefusal(.malformedBody, [Int].self, [1, 0x09, 3, 0x00, 0x00])      // 3 values, 2 bytes
        expectRefusal(.limitExceeded, [UInt8].self,
                      [1, 0x08, 0x80, 0x80, 0x04] + [UInt8](repeating: 0, count: MessageCodingFormat.maximumBodySize))
    }

    @Test func C04_nestingBeyondTheLimitIsRefused() throws {
        let depth = MessageCodingFormat.maximumDepth
        var body: [UInt8] = [1]
        for _ in 0..<(depth + 1) { body += [0x09, 1] }
        body += [0x00]
        expectRefusal(.limitExceeded, Nested.self, body)
        var fits: [UInt8] = [1]
        for _ in 0..<depth { fits += [0x09, 1] }
        fits += [0x00]
        #expect(try decode(Nested.self, fits).depth == depth)
    }

    @Test func C04_aRightIndexOutOfRangeOfAnotherKindOrUsedTwiceIsRefused() {
        let port = ReceiveRight()
        let withSend: (inout Message) -> Void = { $0.attach(port.makeSendRight()) }
        expectRefusal(.invalidRightIndex, SendRight.self, [1, 0x0B, 0])                 // no rights at all
        expectRefusal(.invalidRightIndex, SendRight.self, [1, 0x0B, 1], attach: withSend)  // out of range
        expectRefusal(.invalidRightIndex, ReceiveRightCarrier.self, [1, 0x0D, 0], attach: withSend)  // another kind
        expectRefusal(.invalidRightIndex, SendOnceRightCarrier.self, [1, 0x0C, 0], attach: withSend)
        expectRefusal(.invalidRightIndex, [SendRight].self, [1, 0x09, 2, 0x0B, 0, 0x0B, 0], attach: withSend)  // twice
        expectRefusal(.invalidRightIndex, MemoryRegion.self, [1, 0x0E, 0])             // no region
        expectRefusal(.typeMismatch, SendRight.self, [1, 0x03, 0], attach: withSend)     // a number is no right
        // A right already taken out of the message is not there to name.
        expectRefusal(.invalidRightIndex, SendRight.self, [1, 0x0B, 0]) { message in
            message.attach(port.makeSendRight())
            _ = try? message.takeSendRight(at: 0)
        }
    }

    @Test func C04_aRefusedBodyTakesNoRightOutOfTheMessage() throws {
        let port = ReceiveRight()
        var message = Message(id: 1, body: [1, 0x09, 2, 0x0B, 0, 0x0B, 0])
        message.attach(port.makeSendRight())
        expectCodingError(.invalidRightIndex) {
            _ = try MessageDecoder().decode([SendRight].self, from: &message)
        }
        let kinds = message.carriedRights
        #expect(kinds == [.send])
        _ = try message.takeSendRight(at: 0)
    }
}

/// Arrays of one value nested `depth` deep, ending in nil.
struct Nested: Decodable {
    let depth: Int
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        if try container.decodeNil() {
            depth = 1
        } else {
            depth = try container.decode(Nested.self).depth + 1
        }
    }
}
