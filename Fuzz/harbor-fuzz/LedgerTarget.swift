// Harbor fuzzing — the per-uid accounting of a port's queue, in process.
//
// One port's `PeerLedger` (and the `ParkedMessages` it keeps) driven by a
// little program: messages from many uids charged (descriptors, region
// bytes, past the limit, in runs), plain ones queued, messages received
// one or many at a time, explicit settles, messages and connection ends
// parked and released for some room, everything taken by a reset. Beside
// it a model queue (`LedgerModel`) knows what each uid's still-queued
// messages hold. After every step: no uid ever over a limit (PeerLimits),
// no negative count, the ledger never holding less than the queue does
// (exactly as much once settled), the total the sum of the uids, the
// ledger's verdict on a charge the limits' verdict, and the parked
// messages what the model's turns give. At the end every message is
// received: every charge must have come back to zero.
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

enum LedgerTarget {
    static let uids: [UInt32] = [0, 1000, 1001, 42, 65_534, .max]
    /// The ledger's descriptor limit here (it reads the process's limit).
    static let descriptorLimit = PeerLimits.queuedDescriptorsPerUid
    static let regionLimit = PeerLimits.queuedRegionBytesPerUid
    /// Sequence numbers a port starts at: new, and a moved port's largest.
    static let starts: [UInt64] = [0, 1, WireFormat.maximumCounter - 3, WireFormat.maximumCounter]
    /// Descriptors and region bytes one message holds: values at and around each limit.
    static let descriptorCounts = [0, 1, 2, 3, descriptorLimit / 3, descriptorLimit - 1, descriptorLimit, descriptorLimit + 1]
    static let regionSizes = [0, 1, 4096, 1 << 20, 256 << 20, regionLimit / 2, regionLimit, regionLimit + 1]

    /// At most 12 steps and 272 charges an input: enough to pass every
    /// limit (the flood's takes 257), few enough for 5,000 inputs a CPU-second.
    static let stepsPerInput = 12
    static let chargesPerInput = 272
    /// The most messages an input queues: every charge and a plain one a step.
    static let messagesPerInput = chargesPerInput + stepsPerInput
    /// The most charges in one run of a message holding descriptors: each
    /// asks the process's descriptor limit (`getrlimit`), and the limit is
    /// passed with a few (the counts go to a third of it and past it).
    static let descriptorRun = 4

    static func run(_ data: [UInt8]) {
        var reader = FuzzReader(data)
        var model = LedgerModel(handedOut: starts[reader.choice(starts.count)])
        var ledger = PeerLedger()
        var steps = 0, charges = chargesPerInput
        while !reader.isAtEnd && steps < stepsPerInput {
            steps += 1
            step(&reader, &ledger, &model, charges: &charges)
            model.check(ledger)
        }
        // Everything received and settled: every charge given back.
        model.receive(model.count)
        ledger.settle(handedOut: model.handedOut)
        model.settled = true
        model.check(ledger)
        guard ledger.total.isZero else { fail("ledger: \(ledger.total) still charged with the queue empty") }
        let parked = ledger.parked.removeAll().map(\.id)
        guard parked == model.parked.removeAll() else { fail("ledger: removeAll gave \(parked)") }
    }

    private static func step(
        _ reader: inout FuzzReader, _ ledger: inout PeerLedger, _ model: inout LedgerModel, charges: inout Int
    ) {
        switch reader.choice(8) {
        case 0, 1:
            let index = reader.choice(uids.count), uid = uids[index]
            let usage = usage(&reader)
            let times = min(reader.flag() ? Int(reader.byte()) + 1 : 1, charges,
                            usage.descriptors > 0 ? descriptorRun : .max)
            charges -= times
            for _ in 0..<times {
                let expected = model.verdict(usage, for: index)
                let verdict = ledger.charge(usage, to: uid, handedOut: model.handedOut, queued: model.count)
                model.settled = true
                guard verdict == expected else {
                    fail("ledger: charging \(usage) to \(uid) gave \(String(describing: verdict)), "
                         + "the limits say \(String(describing: expected)); held \(model.held(by: index))")
                }
                if verdict == nil { model.append(usage, from: index) }
            }
        case 2:
            // A plain message within the limit: queued, never charged.
            model.append(PeerUsage(), from: reader.choice(uids.count))
        case 3: model.receive(1)
        case 4: model.receive(Int(reader.byte() % 64))
        case 5:
            ledger.settle(handedOut: model.handedOut)
            model.settled = true
        case 6: park(&reader, &ledger, &model)
        default:
            guard reader.byte() % 8 == 0 else { return }
            // The port died or moved away: everything forgotten.
            let parked = ledger.reset().map(\.id)
            guard parked == model.parked.removeAll() else { fail("ledger: reset gave back \(parked)") }
            model.removeAll()
            model.settled = true
        }
    }

    /// What one message holds: past the limit or not, descriptors, region bytes.
    private static func usage(_ reader: inout FuzzReader) -> PeerUsage {
        let choice = reader.byte()
        return PeerUsage(overLimit: Int(choice & 1), descriptors: descriptorCounts[Int(choice >> 1) % descriptorCounts.count],
                         regionBytes: regionSizes[Int(choice >> 4) % regionSizes.count])
    }

    private static func park(_ reader: inout FuzzReader, _ ledger: inout PeerLedger, _ model: inout LedgerModel) {
        let token = UInt64(reader.choice(4))
        switch reader.choice(4) {
        case 0, 1:
            var content = MessageContent(id: model.parked.nextID, body: [])
            content.countsAgainstLimit = reader.flag()
            let counted = content.countsAgainstLimit
            let first = ledger.parked.park(content, from: token)
            guard first == model.parked.park(counted: counted, from: token) else {
                fail("ledger: park from \(token) said first: \(first)")
            }
        case 2:
            let parked = ledger.parked.parkEnd(of: token)
            guard parked == model.parked.parkEnd(of: token) else { fail("ledger: parkEnd of \(token) said \(parked)") }
        default:
            let room = Int(reader.byte() % 8)
            let (messages, ends, resumed) = ledger.parked.release(room: room)
            let counted = messages.filter(\.countsAgainstLimit).count
            let expected = model.parked.release(room: room)
            guard messages.map(\.id) == expected.messages, ends == expected.ends, resumed == expected.resumed,
                  counted <= room else {
                fail("ledger: release(room: \(room)) gave \(messages.map(\.id)), \(ends) ends, resumed \(resumed); "
                     + "the model \(expected)")
            }
        }
    }

    /// `[start]` then steps: `[operation] operands…`.
    static let seeds: [[UInt8]] = [
        // A message holding a descriptor, received, settled.
        [0, 0, 1, 2, 0, 3, 5],
        // 256 messages past the limit from one uid, then one more (a flood); another uid is unaffected.
        [0, 0, 0, 1, 1, 255, 0, 0, 1, 0, 0, 2, 1, 0, 4, 200, 5],
        // A uid at its descriptor and region limits, plain messages between.
        [2, 0, 3, 0x0C, 0, 2, 0, 0, 3, 0x02, 0, 0, 4, 0x60, 0, 0, 4, 0x70, 0, 4, 3, 5],
        // Parking: counted and uncounted messages and an end on two connections, released a slot at a time.
        [0, 6, 0, 0, 1, 6, 1, 0, 0, 6, 0, 2, 6, 1, 1, 1, 6, 0, 3, 1, 6, 0, 3, 5, 7, 0],
    ]
}
