// Harbor — C01: the body streamed as a value encodes is the body its tree writes.
import HarborCoding
import HarborPorts
import HarborTestSupport
import Testing

/// The encoder streams a value's bytes while the value finishes each
/// container before going on in its parent, and encodes the value again as
/// a tree when it does not (a container written late, a key written twice,
/// `superEncoder()`). Each case here writes the same content both ways: the
/// bodies must be byte for byte the same.
@Suite(.deadline(.seconds(60)))
struct StreamedBodyTests {
    /// What both ways write: a nested keyed container, an array of 300
    /// integers (its count takes two bytes, written once the array has
    /// finished), a dictionary of 40 keys, bytes, strings.
    struct Shape: Encodable {
        /// How `encode(to:)` writes it: in order (streamed), or with a late
        /// write or a key written twice (the tree).
        enum Order { case inOrder, lateNested, keyTwice, superEncoder }
        var order: Order
        var numbers = Array(-150..<150)
        /// One dictionary for every shape: its order is its own.
        var table = Shape.table
        static let table = Dictionary(uniqueKeysWithValues: (0..<40).map { ("key\($0)", $0 * 3) })
        var bytes: [UInt8] = Array(0..<200)
        var name = "streamed ünïcode"

        enum Keys: String, CodingKey { case header, numbers, table, bytes, name, tail }
        enum HeaderKeys: String, CodingKey { case first, second }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var header = container.nestedContainer(keyedBy: HeaderKeys.self, forKey: .header)
            switch order {
            case .inOrder, .superEncoder:
                try header.encode(1, forKey: .first)
                try header.encode("two", forKey: .second)
                try container.encode(numbers, forKey: .numbers)
            case .lateNested:
                try header.encode(1, forKey: .first)
                try container.encode(numbers, forKey: .numbers)
                try header.encode("two", forKey: .second)   // after the parent went on
            case .keyTwice:
                try header.encode(1, forKey: .first)
                try header.encode("two", forKey: .second)
                try container.encode([7], forKey: .numbers)
                try container.encode(numbers, forKey: .numbers)   // replaces [7], at its place
            }
            try container.encode(table, forKey: .table)
            try container.encode(bytes, forKey: .bytes)
            try container.encode(name, forKey: .name)
            if order == .superEncoder {
                try [true, false].encode(to: container.superEncoder(forKey: .tail))
            } else {
                var tail = container.nestedUnkeyedContainer(forKey: .tail)
                try tail.encode(true)
                try tail.encode(false)
            }
        }
    }

    private func body(_ shape: Shape) throws -> [UInt8] {
        try MessageEncoder().encode(shape, id: 1).body
    }

    @Test func C01_aValueWrittenLateOrTwiceIsEncodedAsATreeToTheSameBytes() throws {
        let streamed = try body(Shape(order: .inOrder))
        #expect(streamed.count > 300 + 40 * 6 + 200)
        for order in [Shape.Order.lateNested, .keyTwice, .superEncoder] {
            let tree = try body(Shape(order: order))
            #expect(tree == streamed, "\(order)")
        }
    }

    @Test func C01_aValueWriterStreamsEachValueOrFallsBackForThatValueAlone() throws {
        func message(_ orders: [Shape.Order]) throws -> Message {
            var writer = MessageValueWriter()
            try writer.append("first")
            for order in orders { try writer.append(Shape(order: order)) }
            try writer.append(42)
            return try writer.message(id: 2)
        }
        let streamed = try message([.inOrder, .inOrder]).body
        #expect(try message([.lateNested, .inOrder]).body == streamed)
        #expect(try message([.inOrder, .keyTwice]).body == streamed)
    }

    @Test func C01_theCountOfALargeContainerIsWrittenAsItsVarint() throws {
        let body = try MessageEncoder().encode([UInt8](repeating: 9, count: 3), id: 1).body
        #expect(body == [1, 0x08, 3, 9, 9, 9])
        let strings = try MessageEncoder().encode((0..<130).map { _ in "a" }, id: 1).body
        // version; array of 130 (varint 0x82 0x01); each "a" a string of one byte
        #expect(Array(strings.prefix(4)) == [1, 0x09, 0x82, 0x01])
        #expect(strings.count == 4 + 130 * 3)
        let back = try MessageDecoder().decode([String].self, from: MessageEncoder().encode((0..<130).map { "\($0)" }, id: 1))
        #expect(back == (0..<130).map { "\($0)" })
    }

    @Test func C01_aValueThatThrowsAndIsCaughtIsEncodedAsTheTreeWrites() throws {
        /// Catches its own field's error: the tree then holds the pairs that did encode.
        struct Forgiving: Encodable {
            struct Refuses: Encodable {
                func encode(to encoder: any Encoder) throws {
                    var container = encoder.unkeyedContainer()
                    try container.encode(1)
                    throw MessageCodingError(.invalidValue, "refused")
                }
            }
            enum Keys: CodingKey { case a, bad, b }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .a)
                try? container.encode(Refuses(), forKey: .bad)
                try container.encode(2, forKey: .b)
            }
        }
        struct Plain: Encodable { var a = 1; var b = 2 }
        #expect(try MessageEncoder().encode(Forgiving(), id: 1).body == MessageEncoder().encode(Plain(), id: 1).body)
    }
}
