// Harbor — C01: any Codable value survives a trip through a message.
import HarborCoding
import HarborPorts
import HarborTestSupport
import Testing

@Suite(.deadline(.seconds(60)))
struct RoundTripTests {
    private func roundTrip<T: Codable>(_ value: T, id: Int32 = 9) throws -> T {
        let message = try MessageEncoder().encode(value, id: id)
        let (sentID, plain) = (message.id, message.carriedRights.isEmpty && message.regions.isEmpty)
        #expect(sentID == id)
        #expect(plain)
        return try MessageDecoder().decode(T.self, from: message)
    }

    @Test func C01_structsEnumsArraysOptionalsAndNestedValuesComeBackEqual() throws {
        #expect(try roundTrip(Order.sample) == Order.sample)
        var bare = Order.sample
        bare.fallback = nil
        bare.lines = []
        bare.quantities = [:]
        bare.signature = []
        bare.delivery = .pickup
        bare.comment = ""
        #expect(try roundTrip(bare) == bare)
    }

    @Test func C01_scalarsAtTheirLimitsComeBackExactly() throws {
        #expect(try roundTrip(Int64.min) == .min)
        #expect(try roundTrip(Int64.max) == .max)
        #expect(try roundTrip(UInt64.max) == .max)
        #expect(try roundTrip(Int8.min) == .min)
        #expect(try roundTrip(-0.0 as Double).sign == .minus)
        #expect(try roundTrip(Double.nan).isNaN)
        #expect(try roundTrip(Float.leastNonzeroMagnitude) == .leastNonzeroMagnitude)
        #expect(try roundTrip("") == "")
        #expect(try roundTrip([String?]([nil, "x"])) == [nil, "x"])
        #expect(try roundTrip([Int]()) == [])
        #expect(try roundTrip(Optional<Int>.none) == nil)
        #expect(try roundTrip(true))
    }

    @Test func C01_aSubclassCodesItsSuperclassThroughSuperEncoder() throws {
        let back = try roundTrip(Tanker(name: "Aurora", capacity: 42))
        #expect(back.name == "Aurora" && back.capacity == 42)
    }

    @Test func C01_theBodyIsTheDocumentedCompactFormat() throws {
        struct Ping: Codable { var n: Int; var s: String; var b: [UInt8] }
        let body = try MessageEncoder().encode(Ping(n: -2, s: "hi", b: [7, 8]), id: 1).body
        // version 1; keyed, 3 pairs; "n" signed zig-zag(-2) = 3; "s" string "hi"; "b" bytes [7, 8]
        #expect(body == [1, 0x0A, 3,
                                 1, 0x6E, 0x03, 3,
                                 1, 0x73, 0x07, 2, 0x68, 0x69,
                                 1, 0x62, 0x08, 2, 7, 8])
    }

    @Test func C01_integersDecodeAcrossWidthsWhenTheyFitAndAreRefusedWhenNot() throws {
        let wide = try MessageEncoder().encode(Int64(300), id: 1)
        #expect(try MessageDecoder().decode(UInt16.self, from: wide) == 300)
        var refused = try MessageEncoder().encode(Int64(300), id: 1)
        expectCodingError(.dataCorrupted) {
            _ = try MessageDecoder().decode(Int8.self, from: &refused)
        }
        var negative = try MessageEncoder().encode(-1, id: 1)
        expectCodingError(.dataCorrupted) {
            _ = try MessageDecoder().decode(UInt.self, from: &negative)
        }
    }

    @Test func C01_aValueOfAnotherShapeIsATypedError() throws {
        struct Wants: Codable { var count: Int; var name: String }
        struct Has: Codable { var count: String }
        let message = try MessageEncoder().encode(Has(count: "three"), id: 1)
        do {
            _ = try MessageDecoder().decode(Wants.self, from: message)
            Issue.record("decoded a string as an integer")
        } catch {
            #expect(error.code == .typeMismatch)
            #expect(error.codingPath == ["count"])
        }
        var missing = try MessageEncoder().encode([String: Int](), id: 1)
        expectCodingError(.keyNotFound) {
            _ = try MessageDecoder().decode(Wants.self, from: &missing)
        }
        var unknownCase = try MessageEncoder().encode("sideways", id: 1)
        expectCodingError(.dataCorrupted) {
            _ = try MessageDecoder().decode(Order.Priority.self, from: &unknownCase)
        }
    }

    @Test func C01_aValueOverTheBodyLimitOrTooDeepIsRefusedWhenEncoding() throws {
        expectCodingError(.limitExceeded) {
            _ = try MessageEncoder().encode([UInt8](repeating: 1, count: MessageCodingFormat.maximumBodySize), id: 1)
        }
        // One keyed container a link: 64 nest, 65 do not.
        expectCodingError(.limitExceeded) {
            _ = try MessageEncoder().encode(Link.chain(MessageCodingFormat.maximumDepth + 1), id: 1)
        }
        #expect(try roundTrip(Link.chain(MessageCodingFormat.maximumDepth)).length == MessageCodingFormat.maximumDepth)
    }
}
