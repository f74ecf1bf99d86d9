// Harbor fuzzing — the inbound targets: a fresh port under test per input,
// a hostile peer's program run against it, everything the receiver got
// used the way an application would, then a check that nothing leaked.
import Glibc
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

/// What an inbound target concentrates on (Docs/Fuzzing.md).
enum Focus: Sendable {
    /// Packets and their descriptors: every step kind, anything goes.
    case packet
    /// Moved receive rights: the first message always moves one, with a queue.
    case transfer
    /// Fragmented messages: the first message always has a copied region.
    case fragments
    /// Out-of-line regions and memory-file packets: a sealed region always.
    case regions
}

/// The receiving side: the port under test and what it hands out.
final class Receiver {
    let token = ReceiveRight().token
    var delivered = 0

    /// Receives up to `budget` times (each pumps the connections once).
    func pump(budget: Int) {
        for _ in 0..<budget {
            guard let message = ReceiveRight(token: token).tryReceive() else { continue }
            delivered += 1
            Self.use(message, depth: 0)
        }
    }

    /// Uses a message the way an application would: reads its regions,
    /// takes its rights (draining a received port's queue, sending through
    /// a received send right), answers its reply right.
    static func use(_ received: consuming Message, depth: Int) {
        var message = received
        var checksum: UInt8 = 0
        for region in message.regions {
            region.withUnsafeBytes { bytes in
                if let first = bytes.first, let last = bytes.last { checksum ^= first ^ last }
            }
        }
        for (index, kind) in message.carriedRights.enumerated() {
            do {
                switch kind {
                case .receive:
                    let port = try message.takeReceiveRight(at: index)
                    guard depth < 6 else { continue }
                    for _ in 0..<8 {
                        guard let queued = port.tryReceive() else { break }
                        use(queued, depth: depth + 1)
                    }
                case .send:
                    let right = try message.takeSendRight(at: index)
                    try? right.send(Message(id: 1, body: [checksum]), timeout: .zero)
                case .sendOnce:
                    let right = try message.takeSendOnceRight(at: index)
                    try? right.send(Message(id: 2))
                case .taken:
                    break
                }
            } catch {
                continue
            }
        }
        try? message.reply(Message(id: 3), timeout: .zero)
    }
}

enum Inbound {
    /// Descriptors open and registry records after the warm-up: every input must return to them.
    nonisolated(unsafe) private static var baseline: (descriptors: Set<CInt>, registry: Int)?

    static func run(_ data: [UInt8], focus: Focus) {
        if baseline == nil {
            // Lazily made process-wide objects (death-watch thread, caches)
            // appear on first use: warm up before taking the baseline.
            for seed in Seeds.inbound(focus).prefix(4) { execute(Program.parse(seed), focus: focus) }
            baseline = (DescriptorTable.open(), PortRegistry.count)
        }
        execute(Program.parse(data), focus: focus)
        if getenv("HARBOR_FUZZ_TRACE") != nil {
            report("after input: \(DescriptorTable.open().sorted().map(DescriptorTable.describe))")
        }
        check()
    }

    private static func execute(_ parsed: [Step], focus: Focus) {
        var steps = parsed
        normalize(&steps, focus)
        let holdings = Holdings()
        let receiver = Receiver()
        guard let peer = try? Peer(receiver: receiver.token.port, holdings: holdings) else { return }
        peer.pump = { [unowned peer, unowned receiver] in
            receiver.pump(budget: peer.unread * 2 + 2)
            peer.unread = 0
        }
        for step in steps { peer.run(step) }
        peer.pump()
        // The peer leaves: unfinished messages must go with its connections.
        peer.close(0)
        peer.close(1)
        receiver.pump(budget: 4)
        withExtendedLifetime((holdings, peer, receiver)) {}
    }

    /// Every descriptor and registry record an input made is gone with it (P09, P12).
    private static func check() {
        guard var known = baseline else { return }
        DescriptorTable.expectNoneOpened(since: &known.descriptors)
        baseline = known
        let registry = PortRegistry.count
        if registry > known.registry {
            fail("\(registry - known.registry) port registry records left after the input")
        }
    }

    /// Makes sure the program reaches what the target is about.
    private static func normalize(_ steps: inout [Step], _ focus: Focus) {
        guard focus != .packet else { return }
        let first = steps.firstIndex { if case .message = $0 { true } else { false } }
        guard let index = first, case .message(var spec, let delivery) = steps[index] else {
            steps.insert(.message(Seeds.focusMessage(focus), Delivery()), at: 0)
            return
        }
        switch focus {
        case .transfer:
            let moves = spec.rights.contains { if case .receive = $0 { true } else { false } }
            if !moves {
                let port = PortSpec(queued: [MessageSpec(id: 7, bodyLength: 5)])
                if spec.rights.count >= 4 { spec.rights[0] = .receive(port) } else { spec.rights.append(.receive(port)) }
            }
        case .fragments:
            if !spec.regions.contains(where: { $0.copied && $0.size > 0 }) {
                spec.regions.append(RegionSpec(copied: true, size: 4097))
            }
        case .regions:
            if !spec.regions.contains(where: { !$0.copied }) {
                spec.regions.append(RegionSpec(copied: false, size: 4096))
            }
        case .packet:
            break
        }
        steps[index] = .message(spec, delivery)
    }
}

/// Stops the run as a crash libFuzzer reports and keeps the input of.
func fail(_ why: String) -> Never {
    report("harbor-fuzz: \(why)")
    abort()
}

/// Writes a line to standard error (descriptor 2: `stderr` is shared mutable state to Swift 6).
func report(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
