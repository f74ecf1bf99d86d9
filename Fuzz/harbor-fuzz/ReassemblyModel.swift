// Harbor fuzzing — what each connection's fragmented messages should be:
// the `reassembly` target's model.
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

/// Per connection, its unfinished messages: sender, the copied regions'
/// sizes, and how many of their bytes have arrived.
struct ReassemblyModel {
    /// Where a message's next bytes go.
    struct Position {
        let sizes: [Int]
        let regions: [MappedRegion]
        let filled: Int
    }

    private struct Entry {
        let sender: ProcessIdentity
        let sizes: [Int]
        let regions: [MappedRegion]
        var filled = 0
        var declared: Int { sizes.reduce(0, +) }
    }

    private var lists = [[Entry]](repeating: [], count: ReassemblyTarget.connections)

    /// Bytes `uid`'s unfinished messages declare, every connection together.
    func held(by uid: uid_t) -> Int {
        lists.joined().reduce(0) { $1.sender.uid == uid ? $0 + $1.declared : $0 }
    }

    /// What `PortTransport.start` must do: the refusal, or nil (then the message is added).
    mutating func start(
        _ sender: ProcessIdentity, sizes: [Int], regions: [MappedRegion], on connection: Int
    ) -> WireRejectionReason? {
        lists[connection].removeAll { $0.sender.pid == sender.pid }
        if lists[connection].count >= PeerLimits.assembliesPerConnection {
            lists[connection].removeAll { $0.sender.pid != ReassemblyTarget.own }
        }
        if lists[connection].count >= PeerLimits.assembliesPerConnection { return .badFragment }
        let declared = sizes.reduce(0, +)
        let onConnection = lists[connection].reduce(0) { $0 + $1.declared }
        if declared > PeerLimits.partialBytesPerConnection - onConnection { return .overLimit }
        if declared > PeerLimits.partialBytesPerUid - held(by: sender.uid) { return .overLimit }
        lists[connection].append(Entry(sender: sender, sizes: sizes, regions: regions))
        return nil
    }

    /// What `count` more bytes from `pid` do: a refusal (the message is
    /// gone), or whether they finish it (then it is gone too).
    mutating func add(_ count: Int, from pid: pid_t, on connection: Int) -> (refusal: WireRejectionReason?, complete: Bool) {
        guard let index = lists[connection].firstIndex(where: { $0.sender.pid == pid }) else { return (.badFragment, false) }
        let entry = lists[connection][index]
        guard count <= entry.declared - entry.filled else {
            lists[connection].remove(at: index)
            return (.badFragment, false)
        }
        lists[connection][index].filled += count
        guard entry.filled + count == entry.declared else { return (nil, false) }
        lists[connection].remove(at: index)
        return (nil, true)
    }

    mutating func close(_ connection: Int) { lists[connection].removeAll() }

    /// What is left of `pid`'s message: of its current region, and in all (zeros if none).
    func remaining(of pid: pid_t, on connection: Int) -> (region: Int, total: Int) {
        guard let entry = lists[connection].first(where: { $0.sender.pid == pid }) else { return (0, 0) }
        return (Self.regionLeft(entry.sizes, filled: entry.filled), entry.declared - entry.filled)
    }

    func position(of pid: pid_t, on connection: Int) -> Position? {
        lists[connection].first { $0.sender.pid == pid }.map { Position(sizes: $0.sizes, regions: $0.regions, filled: $0.filled) }
    }

    private static func regionLeft(_ sizes: [Int], filled: Int) -> Int {
        var start = 0
        for size in sizes {
            if filled < start + size { return start + size - filled }
            start += size
        }
        return 0
    }

    /// Stops the run unless `bytes` are in the regions from `position` on.
    static func expect(_ bytes: UnsafeRawBufferPointer, at position: Position) {
        var skip = position.filled, done = 0
        for (size, region) in zip(position.sizes, position.regions) where done < bytes.count {
            if skip >= size { skip -= size; continue }
            let count = min(size - skip, bytes.count - done)
            if memcmp(region.bytes.baseAddress! + skip, bytes.baseAddress! + done, count) != 0 {
                fail("reassembly: \(count) bytes at \(position.filled + done) are not the fragment's")
            }
            done += count
            skip = 0
        }
        if done != bytes.count { fail("reassembly: \(bytes.count - done) bytes had no region") }
    }

    /// Stops the run unless the connections' lists are what the model says.
    func check(_ real: [[FragmentAssembly]]) {
        for (connection, assemblies) in real.enumerated() {
            let expected = lists[connection]
            guard assemblies.count == expected.count, assemblies.count <= PeerLimits.assembliesPerConnection,
                  assemblies.reduce(0, { $0 + $1.declaredBytes }) <= PeerLimits.partialBytesPerConnection else {
                fail("reassembly: connection \(connection) holds \(assemblies.count) messages, the model \(expected.count)")
            }
            for (assembly, entry) in zip(assemblies, expected) {
                guard assembly.sender.pid == entry.sender.pid, assembly.declaredBytes == entry.declared,
                      !assembly.isComplete,
                      assembly.nextDestination?.count == Self.regionLeft(entry.sizes, filled: entry.filled) else {
                    fail("reassembly: \(entry.sender.pid)'s message on \(connection): \(assembly.declaredBytes) declared, "
                         + "next \(String(describing: assembly.nextDestination?.count)); the model \(entry.sizes), "
                         + "\(entry.filled) filled")
                }
            }
        }
        for uid in ReassemblyTarget.uids {
            let charged = PartialCharge.held(by: uid)
            guard charged == held(by: uid), charged <= PeerLimits.partialBytesPerUid else {
                fail("reassembly: uid \(uid) is charged \(charged) bytes, its messages declare \(held(by: uid))")
            }
        }
    }
}
