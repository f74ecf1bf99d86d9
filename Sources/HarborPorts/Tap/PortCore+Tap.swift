// Harbor — arming and disarming a port's taps (PortTap.swift), and what
// admission calls on them (Admission/PortCore+Admission.swift).
import DequeModule
import HarborSystem

extension PortCore {
    /// A tap on this port (``ReceiveRight/tap(bodyPrefix:capacity:)``, whose
    /// documentation says what the arguments may be).
    package func tap(bodyPrefix: Int, capacity: Int) throws(PortError) -> PortTap {
        guard (0...PortTap.maximumBodyPrefix).contains(bodyPrefix) else {
            throw PortError(.invalidArgument, "body prefix \(bodyPrefix) is outside 0...\(PortTap.maximumBodyPrefix)")
        }
        guard (1...PortTap.maximumCapacity).contains(capacity) else {
            throw PortError(.invalidArgument, "tap capacity \(capacity) is outside 1...\(PortTap.maximumCapacity)")
        }
        let buffer = PortTapBuffer(port: name, prefix: bodyPrefix, capacity: capacity)
        addTap(buffer)
        return PortTap(port: self, buffer: buffer)
    }

    /// Arms `buffer`: every admission from now on records into it. A dead
    /// port ends it at once.
    package func addTap(_ buffer: PortTapBuffer) {
        let armed = state.withGuarded { guarded -> Bool in
            guard !guarded.machine.isDead else { return false }
            guarded.taps = (guarded.taps ?? []) + [buffer]
            return true
        }
        if !armed { buffer.end() }
    }

    /// Disarms `buffer`; the port's tap list goes back to nil with the last one.
    package func removeTap(_ buffer: PortTapBuffer) {
        state.withGuarded { guarded in
            guard let taps = guarded.taps else { return }
            let left = taps.filter { $0 !== buffer }
            guarded.taps = left.isEmpty ? nil : left
        }
    }
}

extension PortCore.Guarded {
    /// Records `content`, just admitted with `depth` messages queued, in
    /// each of `taps`: the armed path, kept out of line so the unarmed one
    /// stays a nil check.
    @inline(never)
    static func record(_ content: MessageContent, in taps: [PortTapBuffer], depth: Int) {
        for tap in taps { tap.admitted(content, depth: depth) }
    }

    /// Records the message just appended to the queue, in every armed tap.
    @inline(never)
    func recordLastQueued() {
        guard let taps, let last = machine.queue.last else { return }
        Self.record(last, in: taps, depth: machine.queue.count)
    }

    /// Records the last `count` messages of the queue (a batch adopted
    /// whole), oldest first, each with the depth it made.
    @inline(never)
    func recordLastQueued(count: Int) {
        guard let taps else { return }
        let queue = machine.queue
        let first = queue.count - count
        for offset in 0..<count {
            Self.record(queue[first + offset], in: taps, depth: first + offset + 1)
        }
    }
}
