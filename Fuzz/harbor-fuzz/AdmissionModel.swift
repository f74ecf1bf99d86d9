// Harbor fuzzing — what the `admission` target checks a port against: every
// message accounted for, each connection's order, the limit, the pauses.
@testable import HarborPorts
import HarborSystem

struct AdmissionModel {
    /// Messages handed to the port, and how they left the handing over.
    private var handed = 0
    private var taken = 0
    private var received = 0
    private var refused = 0
    /// The last id received from each connection (0: a moved queue), by
    /// the id's low 3 bits; 0 until one is (ids are positive). A vector,
    /// not a dictionary: no allocation or hashing per message.
    private var lastReceived = SIMD8<Int32>(repeating: 0)
    private var nextNumber: Int32 = 1
    /// A moved queue or a lowered limit may leave counted messages past the limit.
    var movedIn = false
    var limitLowered = false

    /// A new message id, whose connection the id records (low 3 bits).
    mutating func nextID(from token: UInt64) -> Int32 {
        defer { nextNumber &+= 1 }
        return nextNumber << 3 | Int32(token)
    }

    mutating func handedOver(_ counted: Bool) { handed += 1 }

    mutating func admitted(_ admission: consuming PortAdmission, from core: PortCore) {
        refused += admission.refusals.count
        if let content = admission.taken.take() {
            taken += 1
            order(content.id)
        }
    }

    mutating func receive(from core: PortCore, count: Int) {
        var left = count
        while left > 0, let content = core.tryDequeue() {
            left -= 1
            received += 1
            order(content.id)
        }
    }

    private mutating func order(_ id: Int32) {
        let token = Int(id & 7)
        let last = lastReceived[token]
        if last != 0, last >= id {
            fail("admission: connection \(token) delivered \(id >> 3) after \(last >> 3)")
        }
        lastReceived[token] = id
    }

    func check(_ core: PortCore, _ fake: FuzzConnections) {
        // One look under the lock; the paused connections as a bit set
        // (bit `token`). Parked entries include connection ends, which are
        // not messages.
        let (queued, counted, limit, parked, paused, ends) = core.state.withGuarded { guarded in
            var paused: UInt64 = 0
            var ends = 0
            for token in 1...UInt64(AdmissionTarget.connections) where guarded.ledger.parked.isPaused(token) {
                // Only a paused connection has anything parked, its end
                // included (`ends(of:)` is 0 for any other, by its first line).
                paused |= 1 << token
                ends += guarded.ledger.parked.ends(of: token)
            }
            return (guarded.machine.queue.count, guarded.machine.countedMessages, guarded.machine.queueLimit,
                    guarded.ledger.parked.count, paused, ends)
        }
        let accounted = taken + received + queued + (parked - ends) + refused + fake.refusedOnFreedSlots
        guard accounted == handed else {
            fail("admission: \(handed) handed over, \(accounted) accounted for (taken \(taken), received \(received), "
                 + "queued \(queued), parked \(parked - ends), refused \(refused + fake.refusedOnFreedSlots))")
        }
        if !movedIn && !limitLowered && counted > limit {
            fail("admission: \(counted) counted messages queued past the limit \(limit)")
        }
        guard paused == fake.paused else {
            fail("admission: paused \(FuzzConnections.tokens(fake.paused)), parked from \(FuzzConnections.tokens(paused))")
        }
        if parked > 0 && Int(fake.counter.parked) != parked {
            fail("admission: the counter says \(fake.counter.parked) parked, the ledger \(parked)")
        }
    }
}
