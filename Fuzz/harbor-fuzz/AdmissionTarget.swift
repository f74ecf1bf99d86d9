// Harbor fuzzing — a port's admission in process: `PortCore.admit`, the one
// call through which everything another process sent joins a queue.
//
// A real port (HarborPorts' PortCore) is given connections that read nothing
// themselves (`FuzzConnections`: the pump finds no packets; pausing and
// resuming only record the connection), and a little program hands it
// pumps of messages from four connections (counted or not, taken first or
// not), queues moved in with a receive right, connection ends, receives,
// and queue limits raised and lowered. No system call per input: the
// port, its connections and its slot counter are made once, and reset (and
// the reset checked) before each input (AdmissionPort.swift). After every
// step:
//
// - nothing lost or made up: every message handed over is taken, queued,
//   parked or refused (counted as refused), exactly once;
// - the limit holds: counted messages queued never pass the queue limit,
//   unless a moved queue or a lowered limit put them there;
// - exact pausing: a connection is paused exactly while messages of it are
//   parked;
// - order: each connection's messages are received in the order they were
//   handed over (parking keeps a connection's order);
// - no refusal without cause: a plain message from a connection is never
//   refused while the queue is within its flood headroom.
@testable import HarborPorts
import HarborSystem

enum AdmissionTarget {
    static let connections = 4
    static let stepsPerInput = 24
    static let limits = [0, 1, 2, 3, 5, 8, 64, 1024]

    /// The port every input uses, its connections and slot counter (a
    /// memfd), made once (AdmissionPort.swift).
    static let port = AdmissionPort(slots: try! SharedSlots(free: 5))

    static func run(_ data: [UInt8]) {
        var reader = FuzzReader(data)
        // As a new port: nothing of the last input is left.
        port.check()
        let core = port.core
        let fake = port.connections
        var model = AdmissionModel()
        var steps = 0
        while !reader.isAtEnd && steps < stepsPerInput {
            steps += 1
            step(&reader, core, fake, &model)
            model.check(core, fake)
        }
        // Everything left is received: nothing parked stays behind a queue
        // that has room.
        model.receive(from: core, count: Int.max)
        model.check(core, fake)
        // Reset here, not at the next input's start: what this input
        // allocated is freed within it, so libFuzzer, which runs an input
        // again when it made more allocations than it freed (a leak check),
        // runs each once.
        port.reset()
    }

    private static func step(_ reader: inout FuzzReader, _ core: PortCore, _ fake: FuzzConnections,
                             _ model: inout AdmissionModel) {
        switch reader.choice(8) {
        case 0, 1, 2:
            // One pump: up to 8 messages from the connections, then ends.
            var arrivals = PortArrivals(takeFirst: reader.flag())
            let count = Int(reader.byte() % 9)
            for _ in 0..<count {
                let token = UInt64(reader.choice(connections)) + 1
                var content = MessageContent(id: model.nextID(from: token), body: [])
                content.countsAgainstLimit = reader.byte() % 4 != 0
                model.handedOver(content.countsAgainstLimit)
                arrivals.append(message: content, from: token, reserving: 8)
            }
            let admission = core.admit(arrivals, from: fake)
            model.admitted(admission, from: core)
        case 3:
            model.receive(from: core, count: Int(reader.byte() % 6))
        case 4:
            let limit = limits[reader.choice(limits.count)]
            if limit < core.status.queueLimit { model.limitLowered = true }
            try? core.setQueueLimit(limit)
        case 5:
            // A queue moved in with a receive right: its messages, in order.
            let count = Int(reader.byte() % 6)
            var messages: [MessageContent] = []
            messages.reserveCapacity(count)
            for _ in 0..<count {
                var content = MessageContent(id: model.nextID(from: 0), body: [])
                content.countsAgainstLimit = reader.flag()
                model.handedOver(content.countsAgainstLimit)
                messages.append(content)
            }
            model.movedIn = true
            let admission = core.admit(PortArrivals(movedQueue: messages), from: fake)
            model.admitted(admission, from: core)
        case 6:
            // A send connection ends; its end waits behind what it parked.
            let token = UInt64(reader.choice(connections)) + 1
            core.sendRightMade()
            var arrivals = PortArrivals()
            arrivals.append(PortArrivals.Ending(token: token, isSendOnce: false, used: false))
            let admission = core.admit(arrivals, from: fake)
            model.admitted(admission, from: core)
        default:
            // Nothing new: parked messages join if there is room (a freed slot).
            let admission = core.admit(PortArrivals(), from: fake)
            model.admitted(admission, from: core)
        }
    }

    static let seeds: [[UInt8]] = [
        // A limit of 1, a pump of three counted messages from one connection (two park), receives.
        [4, 1, 0, 0, 3, 0, 1, 0, 1, 0, 1, 3, 1, 3, 1, 3, 1],
        // Two connections interleaved at limit 2, ends behind parked messages, receive all.
        [4, 2, 1, 0, 6, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 6, 0, 6, 1, 3, 5],
        // A moved queue past a limit of 0, then a pump taken first.
        [4, 0, 5, 5, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 3, 5],
    ]
}

/// Connections that read nothing: what admission asks of a transport,
/// recorded (which connections it paused) and checked.
final class FuzzConnections: PortConnections, @unchecked Sendable {
    // @unchecked: used by one fuzzing thread only.
    let slots: SharedSlots
    let counter: SharedSlots.Counter
    /// The paused connections, bit `token` each (tokens are 1...4): no
    /// allocation or hashing per pause.
    var paused: UInt64 = 0
    /// Messages refused while parked ones joined on a freed slot.
    var refusedOnFreedSlots = 0

    init(slots: SharedSlots) {
        self.slots = slots
        counter = slots.counter
    }

    var connectionCount: Int { AdmissionTarget.connections }
    func pump(into port: PortCore, deadline: WaitDeadline, takeFirst: Bool) -> PumpOutcome { PumpOutcome() }
    func slotFreed(port: PortCore) {
        // As the transport does: parked messages join first.
        guard counter.parked > 0 else { return }
        refusedOnFreedSlots += port.admit(PortArrivals(), from: self).refusals.count
    }
    func watchHangUps(for port: PortCore) {}
    func pauseReading(_ token: UInt64) {
        guard token < 64 else { fail("admission: connection \(token) paused, not one of the port's") }
        guard paused & 1 << token == 0 else { fail("admission: connection \(token) paused twice") }
        paused |= 1 << token
    }
    func resumeReading(_ token: UInt64) {
        guard token < 64, paused & 1 << token != 0 else { fail("admission: connection \(token) resumed, not paused") }
        paused &= ~(1 << token)
    }
    /// The tokens of a bit set of connections, for a report.
    static func tokens(_ set: UInt64) -> [UInt64] { (0..<64).filter { set & 1 << $0 != 0 } }
    func removeWatch(_ token: UInt64) {}
    func readSenderCgroups() {}
    func shutDown() {}
}
