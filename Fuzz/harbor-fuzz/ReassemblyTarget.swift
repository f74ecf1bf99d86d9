// Harbor fuzzing — fragmented messages put back together, in process.
//
// The state machine behind the `fragments` target without its sockets:
// `PortTransport.start` and `PortTransport.add` (PortTransport+Fragments
// .swift) over three connections' lists of `FragmentAssembly`, and the
// direct path's `nextDestination` / `advance(by:)`, driven by a little
// program. Senders are this process (alive) and pids no process can have
// (dead, for the room a full connection makes: the one system call here,
// `kill(pid, 0)`, made only when a connection already holds four
// messages). Messages declare copied regions of 1 byte to 200 MiB
// (address space only: made once, at start-up, and reused), a sealed one
// among them sometimes. Beside it a model (`ReassemblyModel`) knows what
// each connection holds. After every step: every list what the model
// says, at most four messages and 256 MiB declared per connection, each
// uid's process-wide charge (`PartialCharge`) the sum of its unfinished
// messages and within 256 MiB, the next destination the rest of the
// current region; after every fragment, its bytes where they belong. At
// the end, every connection closed: every uid's charge back to zero.
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

enum ReassemblyTarget {
    static let own = getpid()
    /// This process (alive) and pids past any `pid_max` (dead).
    static let pids: [pid_t] = [own, 0x3FFF_0001, 0x3FFF_0002, 0x3FFF_0003, 0x3FFF_0004, 0x3FFF_0005]
    static let uids: [uid_t] = [1000, 1001, 0]
    static let connections = 3

    /// The most regions a message here declares.
    static let regionsPerMessage = 5

    /// Copied regions, made once: the sizes a region can have, page and
    /// fragment edges, and past a quarter, a half, and most of a limit.
    /// A set per place in a message, so no message holds one twice (its
    /// fragments would overwrite each other's bytes).
    static let copied: [[MappedRegion]] = (0..<regionsPerMessage).map { _ in
        [1, 7, 4095, 4096, 4097, 98_280, 98_281, 300_001, 64 << 20, 128 << 20, 200 << 20].map { size in
            guard let region = try? MappedRegion(privateCount: size) else { fail("reassembly: no \(size)-byte region") }
            return region
        }
    }

    /// A sealed region, which a fragmented message may carry besides: not filled by fragments.
    static let sealed: MappedRegion = {
        let seals = MemoryFile.allSeals
        guard let file = Decoys.memoryFile(size: 4096, seals: seals, fill: 1),
              let region = try? MappedRegion(sealed: file, limit: 4096) else { fail("reassembly: no sealed region") }
        return region
    }()

    /// What fragments carry: a pattern, read from an offset the input picks.
    static let pattern: [UInt8] = (0..<(2 * WireFormat.maximumFragmentData)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }

    /// At most 10 steps an input: room for six senders on a connection and
    /// more, few enough for 5,000 inputs a CPU-second.
    static let stepsPerInput = 10

    static func run(_ data: [UInt8]) {
        for uid in uids where PartialCharge.held(by: uid) != 0 {
            fail("reassembly: uid \(uid) holds \(PartialCharge.held(by: uid)) bytes before the input")
        }
        var reader = FuzzReader(data)
        var lists = [[FragmentAssembly]](repeating: [], count: connections)
        var model = ReassemblyModel()
        var steps = 0
        while !reader.isAtEnd && steps < stepsPerInput {
            steps += 1
            step(&reader, &lists, &model)
            model.check(lists)
        }
        lists.removeAll()
        for uid in uids where PartialCharge.held(by: uid) != 0 {
            fail("reassembly: uid \(uid) holds \(PartialCharge.held(by: uid)) bytes with every connection closed")
        }
    }

    private static func step(_ reader: inout FuzzReader, _ lists: inout [[FragmentAssembly]], _ model: inout ReassemblyModel) {
        let connection = reader.choice(connections)
        let pid = pids[reader.choice(pids.count)]
        switch reader.choice(8) {
        case 0, 1: start(&reader, connection, pid, &lists, &model)
        case 2, 3, 4: fragment(&reader, connection, pid, &lists, &model)
        case 5: direct(&reader, connection, &lists, &model)
        case 6:
            // The connection closed: its unfinished messages go.
            lists[connection].removeAll()
            model.close(connection)
        default: break
        }
    }

    private static func start(
        _ reader: inout FuzzReader, _ connection: Int, _ pid: pid_t,
        _ lists: inout [[FragmentAssembly]], _ model: inout ReassemblyModel
    ) {
        let sender = ProcessIdentity(pid: pid, uid: uids[reader.choice(uids.count)], gid: 0)
        var regions: [MappedRegion] = [], copiedRegions: [MappedRegion] = [], sizes: [Int] = []
        let count = reader.choice(regionsPerMessage - 1) + 1
        regions.reserveCapacity(2 * count)
        copiedRegions.reserveCapacity(count)
        sizes.reserveCapacity(count)
        for place in 0..<count {
            let choice = reader.byte()
            if choice & 0x80 != 0 { regions.append(sealed) }
            let region = copied[place][Int(choice & 0x7F) % copied[place].count]
            regions.append(region)
            copiedRegions.append(region)
            sizes.append(region.count)
        }
        var content = MessageContent(id: 1, body: [], trailer: MessageTrailer(sender: sender))
        content.regions = regions
        let assembly = FragmentAssembly(content: content, sender: sender)
        guard assembly.declaredBytes == sizes.reduce(0, +), !assembly.isComplete else {
            fail("reassembly: declares \(assembly.declaredBytes) bytes for regions of \(sizes)")
        }
        let expected = model.start(sender, sizes: sizes, regions: copiedRegions, on: connection)
        var refusal: WireRejectionReason?
        do { try PortTransport.start(assembly, in: &lists[connection]) } catch { refusal = error.reason }
        guard refusal == expected else {
            fail("reassembly: starting \(sizes) from \(pid) on \(connection) gave \(String(describing: refusal)), "
                 + "expected \(String(describing: expected))")
        }
    }

    private static func fragment(
        _ reader: inout FuzzReader, _ connection: Int, _ pid: pid_t,
        _ lists: inout [[FragmentAssembly]], _ model: inout ReassemblyModel
    ) {
        let rest = model.remaining(of: pid, on: connection)
        let wanted = switch reader.choice(8) {
        case 0: 1
        case 1: 2
        case 2: 4096
        case 3: rest.region
        case 4: rest.region + 1
        case 5: rest.total
        case 6: rest.total + 1
        default: WireFormat.maximumFragmentData
        }
        let length = min(max(wanted, 1), WireFormat.maximumFragmentData)
        let offset = Int(reader.u16())
        let sender = ProcessIdentity(pid: pid, uid: 0, gid: 0)
        let position = model.position(of: pid, on: connection)
        let expected = model.add(length, from: pid, on: connection)
        pattern.withUnsafeBytes { all in
            let bytes = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
            var whole: MessageContent?
            var refusal: WireRejectionReason?
            do throws(WireRejection) { whole = try PortTransport.add(bytes, from: sender, to: &lists[connection]) } catch { refusal = error.reason }
            guard refusal == expected.refusal, (whole != nil) == expected.complete else {
                fail("reassembly: \(length) bytes from \(pid) on \(connection) gave \(String(describing: refusal)), "
                     + "complete: \(whole != nil); expected \(expected)")
            }
            if let position, refusal == nil { ReassemblyModel.expect(bytes, at: position) }
            if let whole, let position, whole.regions.filter({ $0.descriptor == nil }).map(\.count) != position.sizes {
                fail("reassembly: the finished message's regions are not the ones it declared")
            }
        }
    }

    /// The pump's direct path: the kernel writes a fragment's data straight
    /// into `nextDestination` (emulated for at most a page), then `advance`.
    private static func direct(
        _ reader: inout FuzzReader, _ connection: Int, _ lists: inout [[FragmentAssembly]], _ model: inout ReassemblyModel
    ) {
        guard lists[connection].count == 1, let destination = lists[connection][0].nextDestination else { return }
        let pid = lists[connection][0].sender.pid
        let wanted = switch reader.choice(4) {
        case 0: 1
        case 1: 4095
        case 2: destination.count
        default: WireFormat.maximumFragmentData
        }
        let length = min(wanted, destination.count, WireFormat.maximumFragmentData)
        let written = min(length, 4096)
        let offset = Int(reader.u16())
        let position = model.position(of: pid, on: connection)
        pattern.withUnsafeBytes { all in
            let bytes = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + written)])
            destination.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: written)
            if let position { ReassemblyModel.expect(bytes, at: position) }
        }
        let expected = model.add(length, from: pid, on: connection)
        lists[connection][0].advance(by: length)
        guard lists[connection][0].isComplete == expected.complete, expected.refusal == nil else {
            fail("reassembly: advancing \(length) bytes: complete \(lists[connection][0].isComplete), expected \(expected)")
        }
        if expected.complete {
            var whole = lists[connection].removeFirst()
            _ = whole.finish()
        }
    }

    /// Steps: `[connection] [sender] [operation] operands…`.
    static let seeds: [[UInt8]] = [
        // A 4097-byte region, then the rest of it in one fragment.
        [0, 0, 0, 0, 0, 4, 0, 0, 2, 3, 0, 0],
        // 7 bytes and a sealed region and 4095 bytes, in fragments of 1, all but one, and the rest.
        [0, 0, 0, 0, 1, 1, 0x82, 0, 0, 2, 0, 5, 0, 0, 0, 2, 3, 9, 0, 0, 0, 3, 5, 0, 0],
        // 64 MiB by the direct path, one region's worth at a time.
        [1, 1, 0, 1, 1, 8, 2, 1, 0, 5, 2, 0, 0, 1, 0, 5, 1, 0, 0, 1, 0, 5, 2, 0, 0],
        // Six senders on one connection: the dead make room for the sixth.
        [2, 1, 0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 1, 2, 4, 0, 0, 0, 1, 2, 5, 0, 0, 0, 1],
        // 200 MiB twice for one uid (over its limit), 200 MiB more on a connection, then it closes.
        [0, 1, 0, 0, 0, 10, 1, 2, 0, 0, 0, 10, 0, 3, 0, 1, 0, 10, 0, 0, 6],
        // A fragment without a message; more bytes than declared.
        [0, 2, 2, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0, 2, 3, 6, 0, 0],
    ]
}
