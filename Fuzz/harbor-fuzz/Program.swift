// Harbor fuzzing — the program an inbound fuzz input stands for.
//
// A program is a list of steps a hostile peer takes on its connections to
// the port under test: messages built by Harbor's own encoder (rights,
// moved receive rights with queued messages, regions, a reply right) and
// then damaged (bytes, descriptors, memory-file wrapping, fragments), raw
// packets with chosen descriptors, wait packets, stray fragments, pumps
// and hang-ups. `parse` reads any bytes as a program; `write` gives the
// bytes of a program back (seeds and the structure-aware mutator use it).
import HarborSystem
import HarborTransport

enum Step {
    case message(MessageSpec, Delivery)
    case raw(bytes: [UInt8], decoys: [Decoy], connection: Int)
    case wait(Decoy, connection: Int)
    /// A fragment packet whatever is in progress: `length` data bytes.
    case strayFragment(length: Int, corruption: UInt8, connection: Int)
    /// The receiver reads what has arrived so far.
    case pump
    /// The peer closes one connection (mid-message, possibly).
    case close(connection: Int)
}

/// A message as the encoder gets it.
struct MessageSpec {
    var id: Int32 = 0
    var bodyLength = 0
    var counted = true
    var reply = ReplySpec.none
    var rights: [RightSpec] = []
    var regions: [RegionSpec] = []
}

enum ReplySpec: Int, CaseIterable { case none, send, sendOnce }

/// A right to a fresh port of the peer's (this process's).
enum RightSpec {
    case send, sendOnce, taken
    /// The port's receive right, moved with its queue and requests.
    case receive(PortSpec)
}

struct PortSpec {
    var queued: [MessageSpec] = []
    var noSenders = false
    var portDestroyed = false
    /// A queue limit to set before the move (0: the default).
    var limit: UInt8 = 0
}

struct RegionSpec {
    /// Copied (private memory, sent in fragments) or a sealed memfd.
    var copied: Bool
    var size: Int

    /// Sizes worth trying: empty, tiny, page edges, a fragment's edge, several fragments.
    static let sizes = [0, 1, 7, 4095, 4096, 4097, 65_536, 98_280, 98_281, 200_000, 300_001]
}

/// How the encoded message is damaged and sent.
struct Delivery {
    var connection = 0
    var edits: [ByteEdit] = []
    var descriptorEdits: [DescriptorEdit] = []
    /// Leave the header's descriptor count as encoded after descriptor edits.
    var keepDeclaredCount = false
    /// 0: a memory file only when the packet is too large; else forced, with
    /// `MemoryFileVariant(rawValue: memoryFile - 1)`'s damage.
    var memoryFile: UInt8 = 0
    var fragmentEdits: [FragmentEdit] = []
}

/// One damaged field: `section` 0 header, 1 entries, 2 body, 3 nested, 4 anywhere.
struct ByteEdit {
    var section: UInt8
    var offset: UInt16
    var operation: UInt8
    var value: UInt32
}

struct DescriptorEdit {
    /// 0 drop, 1 duplicate, 2 swap with the next, 3 replace with the decoy, 4 add the decoy.
    var operation: UInt8
    var index: UInt8
    var decoy: Decoy
}

struct FragmentEdit {
    /// 0 drop, 1 send twice, 2 resize, 3 damage the header, 4 add a descriptor,
    /// 5 send a plain message before it, 6 send it on the other connection, 7 chunk size.
    var operation: UInt8
    var index: UInt8
    var value: UInt16
}

/// A descriptor the peer passes in place of (or beside) the right one.
struct Decoy {
    var kind: UInt8
    var size: UInt8
}

enum Program {
    static let maximumSteps = 16
    /// Ports, messages and regions one program may describe in all, so a
    /// short input cannot ask for an exponential tree.
    static let maximumNodes = 48
    static let maximumDepth = 5

    static func parse(_ bytes: [UInt8]) -> [Step] {
        var reader = FuzzReader(bytes)
        var budget = maximumNodes
        var steps: [Step] = []
        while !reader.isAtEnd && steps.count < maximumSteps {
            steps.append(step(&reader, budget: &budget))
        }
        return steps
    }

    static func write(_ steps: [Step]) -> [UInt8] {
        var writer = FuzzWriter()
        for step in steps { write(step, &writer) }
        return writer.bytes
    }

    // MARK: Reading

    private static func step(_ reader: inout FuzzReader, budget: inout Int) -> Step {
        switch reader.choice(6) {
        case 0:
            let spec = message(&reader, depth: 0, budget: &budget)
            return .message(spec, delivery(&reader))
        case 1:
            let count = Int(reader.u16()) % 2048
            let bytes = reader.bytes(count)
            let decoys = (0..<reader.choice(6)).map { _ in decoy(&reader) }
            return .raw(bytes: bytes, decoys: decoys, connection: reader.choice(2))
        case 2: return .wait(decoy(&reader), connection: reader.choice(2))
        case 3: return .strayFragment(length: Int(reader.u32() % 200_000), corruption: reader.byte(), connection: reader.choice(2))
        case 4: return .pump
        default: return .close(connection: reader.choice(2))
        }
    }

    private static func message(_ reader: inout FuzzReader, depth: Int, budget: inout Int) -> MessageSpec {
        budget -= 1
        var spec = MessageSpec()
        spec.id = Int32(bitPattern: reader.u32())
        spec.bodyLength = Int(reader.u32() % 65_540)
        let flags = reader.byte()
        spec.counted = flags & 1 == 0
        spec.reply = ReplySpec(rawValue: Int(flags >> 1) % 3) ?? .none
        for _ in 0..<reader.choice(5) {
            let kind = reader.choice(4)
            guard budget > 0 else { spec.rights.append(.taken); continue }
            switch kind {
            case 0: spec.rights.append(.send)
            case 1: spec.rights.append(.sendOnce)
            case 2: spec.rights.append(.taken)
            default:
                guard depth < maximumDepth else { spec.rights.append(.send); continue }
                spec.rights.append(.receive(port(&reader, depth: depth, budget: &budget)))
            }
        }
        for _ in 0..<reader.choice(4) {
            budget -= 1
            let region = reader.byte()
            spec.regions.append(RegionSpec(copied: region & 1 == 1, size: RegionSpec.sizes[Int(region >> 1) % RegionSpec.sizes.count]))
        }
        return spec
    }

    private static func port(_ reader: inout FuzzReader, depth: Int, budget: inout Int) -> PortSpec {
        budget -= 1
        var spec = PortSpec()
        let flags = reader.byte()
        spec.noSenders = flags & 1 != 0
        spec.portDestroyed = flags & 2 != 0
        spec.limit = reader.byte()
        for _ in 0..<reader.choice(4) where budget > 0 {
            spec.queued.append(message(&reader, depth: depth + 1, budget: &budget))
        }
        return spec
    }

    private static func delivery(_ reader: inout FuzzReader) -> Delivery {
        var delivery = Delivery()
        delivery.connection = reader.choice(2)
        delivery.edits = (0..<reader.choice(7)).map { _ in
            ByteEdit(section: reader.byte() % 5, offset: reader.u16(), operation: reader.byte(), value: reader.u32())
        }
        delivery.descriptorEdits = (0..<reader.choice(4)).map { _ in
            DescriptorEdit(operation: reader.byte() % 5, index: reader.byte(), decoy: decoy(&reader))
        }
        let flags = reader.byte()
        delivery.keepDeclaredCount = flags & 1 != 0
        delivery.memoryFile = (flags >> 1) % UInt8(MemoryFileVariant.allCases.count + 1)
        delivery.fragmentEdits = (0..<reader.choice(4)).map { _ in
            FragmentEdit(operation: reader.byte() % 8, index: reader.byte(), value: reader.u16())
        }
        return delivery
    }

    private static func decoy(_ reader: inout FuzzReader) -> Decoy {
        Decoy(kind: reader.byte(), size: reader.byte())
    }

    // MARK: Writing (the exact inverse of reading, for a parsed program)

    private static func write(_ step: Step, _ writer: inout FuzzWriter) {
        switch step {
        case .message(let spec, let delivery):
            writer.byte(0)
            write(spec, &writer)
            write(delivery, &writer)
        case .raw(let bytes, let decoys, let connection):
            writer.byte(1)
            writer.u16(bytes.count)
            writer.bytes(bytes)
            writer.byte(decoys.count)
            for decoy in decoys { write(decoy, &writer) }
            writer.byte(connection)
        case .wait(let decoy, let connection):
            writer.byte(2)
            write(decoy, &writer)
            writer.byte(connection)
        case .strayFragment(let length, let corruption, let connection):
            writer.byte(3)
            writer.u32(UInt32(length))
            writer.byte(corruption)
            writer.byte(connection)
        case .pump:
            writer.byte(4)
        case .close(let connection):
            writer.byte(5)
            writer.byte(connection)
        }
    }

    private static func write(_ spec: MessageSpec, _ writer: inout FuzzWriter) {
        writer.u32(UInt32(bitPattern: spec.id))
        writer.u32(UInt32(spec.bodyLength))
        writer.byte((spec.counted ? 0 : 1) | spec.reply.rawValue << 1)
        writer.byte(spec.rights.count)
        for right in spec.rights {
            switch right {
            case .send: writer.byte(0)
            case .sendOnce: writer.byte(1)
            case .taken: writer.byte(2)
            case .receive(let port):
                writer.byte(3)
                writer.byte((port.noSenders ? 1 : 0) | (port.portDestroyed ? 2 : 0))
                writer.byte(port.limit)
                writer.byte(port.queued.count)
                for queued in port.queued { write(queued, &writer) }
            }
        }
        writer.byte(spec.regions.count)
        for region in spec.regions {
            let index = RegionSpec.sizes.firstIndex(of: region.size) ?? 1
            writer.byte(index << 1 | (region.copied ? 1 : 0))
        }
    }

    private static func write(_ delivery: Delivery, _ writer: inout FuzzWriter) {
        writer.byte(delivery.connection)
        writer.byte(delivery.edits.count)
        for edit in delivery.edits {
            writer.byte(edit.section)
            writer.u16(edit.offset)
            writer.byte(edit.operation)
            writer.u32(edit.value)
        }
        writer.byte(delivery.descriptorEdits.count)
        for edit in delivery.descriptorEdits {
            writer.byte(edit.operation)
            writer.byte(edit.index)
            write(edit.decoy, &writer)
        }
        writer.byte((delivery.keepDeclaredCount ? 1 : 0) | Int(delivery.memoryFile) << 1)
        writer.byte(delivery.fragmentEdits.count)
        for edit in delivery.fragmentEdits {
            writer.byte(edit.operation)
            writer.byte(edit.index)
            writer.u16(edit.value)
        }
    }

    private static func write(_ decoy: Decoy, _ writer: inout FuzzWriter) {
        writer.byte(decoy.kind)
        writer.byte(decoy.size)
    }
}
