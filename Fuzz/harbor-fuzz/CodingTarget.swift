// Harbor fuzzing — HarborCoding's decoder: a Codable message's body from another process.
//
// The input is `[rights] [kinds] [regions] body bytes…`: the message
// carries `rights % 8` rights, their kinds two bits each from `kinds`
// (send, send-once, receive, or a send right already taken out), and
// `regions % 4` small private regions; the rest is the body. The body is
// decoded, as hostile input, as a value that takes whatever the body holds
// (`AnyCoded`, asking the decoder for each kind in turn, rights and regions
// included), as fixed types with every Codable shape, and as a sequence of
// values read one at a time (`MessageValueReader`). Invariants: every
// failure is a MessageCodingError; a body that decoded as `AnyCoded`
// without rights encodes again into one that decodes to an equal value;
// rights the value took are marked taken in the message and every other
// right is still there; a typed value that decoded encodes and decodes back
// equal.
import HarborCoding
@testable import HarborPorts
import HarborSystem

enum CodingTarget {
    static func run(_ data: [UInt8]) {
        guard data.count >= 3 else { return }
        let rightCount = Int(data[0] % 8)
        let kinds = data[1]
        let regionCount = Int(data[2] % 4)
        let body = Array(data[3...])
        let port = ReceiveRight()
        func message() -> Message {
            var message = Message(id: 1, body: body)
            for index in 0..<rightCount {
                switch (kinds >> (2 * (index % 4))) & 3 {
                case 0: message.attach(port.makeSendRight())
                case 1: message.attach(port.makeSendOnceRight())
                case 2: message.attach(ReceiveRight())
                default:
                    message.attach(port.makeSendRight())
                    _ = try? message.takeSendRight(at: index)
                }
            }
            for index in 0..<regionCount {
                let bytes = [UInt8](repeating: UInt8(index), count: index * 100)
                if let region = try? bytes.withUnsafeBytes({ try MappedRegion(copying: $0) }) {
                    message.content.regions.append(region)
                }
            }
            return message
        }

        var any = message()
        let before = any.carriedRights
        do {
            let value = try MessageDecoder().decode(AnyCoded.self, from: &any)
            let after = any.carriedRights
            let taken = value.rightCount
            guard zip(before, after).filter({ $0 != $1 }).allSatisfy({ $0.1 == .taken }),
                  after.filter({ $0 == .taken }).count == before.filter({ $0 == .taken }).count + taken else {
                fail("coding: rights \(before) became \(after) for a value holding \(taken)")
            }
            if taken == 0 && !value.hasRegion { checkRoundTrip(value) }
        } catch {
            check(error)
        }
        _ = port.tryReceive()
        typed(Sample.self, message())
        typed([String: [Int64?]].self, message())
        typed(Fielded.self, message())
        sequence(message())
        while port.tryReceive() != nil {}
    }

    private static func typed<T: Codable>(_ type: T.Type, _ message: consuming Message) {
        do {
            let value = try MessageDecoder().decode(type, from: message)
            if let equatable = value as? Sample {
                do {
                    let again = try MessageDecoder().decode(Sample.self, from: MessageEncoder().encode(equatable, id: 1))
                    if again != equatable { fail("coding: \(equatable) came back as \(again)") }
                } catch {
                    fail("coding: a decoded \(T.self) did not round-trip: \(error)")
                }
            }
        } catch {
            check(error)
        }
    }

    /// The body as a sequence of values, read one at a time.
    private static func sequence(_ message: consuming Message) {
        do {
            var reader = try MessageValueReader(message)
            while !reader.isAtEnd { _ = try? reader.next(AnyCoded.self) }
            let rest = reader.finish()
            _ = rest.carriedRights
        } catch {
            check(error)
        }
    }

    private static func checkRoundTrip(_ value: AnyCoded) {
        do {
            var message = try MessageEncoder().encode(value, id: 1)
            let again = try MessageDecoder().decode(AnyCoded.self, from: &message)
            if again != value { fail("coding: \(value) came back as \(again)") }
        } catch {
            fail("coding: a decoded value did not round-trip: \(error)")
        }
    }

    /// Every thrown error must be the coder's typed one, with a description.
    private static func check(_ error: MessageCodingError) {
        _ = error.description
    }

    static var seeds: [[UInt8]] { CodingSeeds.make() }
}
