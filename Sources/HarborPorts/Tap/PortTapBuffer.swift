// Harbor — a port tap's bounded buffer of records, filled under the port's
// lock by admission and emptied by the tap's reader.
//
// Admission calls `admitted` under the port's lock (the one call out of
// admission besides the transport's leaf operations): it takes only this
// buffer's own lock, never blocks, never re-enters a port, and when the
// buffer is full it counts a drop instead of waiting for the reader. A
// reader waiting for records is woken through its parker after this lock
// is released (still under the port's; the parker's lock is a leaf too).
import DequeModule
import HarborSystem

/// The records a ``PortTap`` has not handed out yet, at most `capacity`.
package final class PortTapBuffer: Sendable {
    /// The tapped port.
    package let port: PortName
    /// The most body bytes a record copies.
    package let prefix: Int
    /// The most records held before admissions are counted as drops.
    package let capacity: Int
    private let state: HarborLock<State>

    private struct State {
        var records = Deque<PortCaptureRecord>()
        /// Admissions seen while armed (the next record's index is this + 1).
        var admitted: UInt64 = 0
        var dropped: UInt64 = 0
        var droppedSinceRecord: UInt64 = 0
        /// The reader asleep waiting for a record.
        var waiter: Parker?
        /// Disarmed, or the port died: no record comes any more.
        var ended = false
    }

    package init(port: PortName, prefix: Int, capacity: Int) {
        self.port = port
        self.prefix = prefix
        self.capacity = capacity
        state = HarborLock(State())
    }

    /// Records `content`, just admitted with `depth` messages now queued,
    /// or counts a drop if the buffer is full. Never blocks.
    package func admitted(_ content: MessageContent, depth: Int) {
        let waiter = state.withLockedValue { state -> Parker? in
            guard !state.ended else { return nil }
            state.admitted &+= 1
            guard state.records.count < capacity else {
                state.dropped &+= 1
                state.droppedSinceRecord &+= 1
                return nil
            }
            state.records.append(PortCaptureRecord(
                content, port: port, depth: depth, index: state.admitted, prefix: prefix,
                droppedBefore: state.droppedSinceRecord))
            state.droppedSinceRecord = 0
            return state.waiter.take()
        }
        waiter?.unpark()
    }

    /// No record comes any more (the tap was cancelled, or its port died):
    /// a waiting reader is woken, and readers get what is left, then nil.
    package func end() {
        let waiter = state.withLockedValue { state -> Parker? in
            state.ended = true
            return state.waiter.take()
        }
        waiter?.unpark()
    }

    /// Takes up to `limit` records, waiting until `deadline` for the first.
    /// Empty when none came in time, or none will (``isEnded``).
    package func take(atMost limit: Int, until deadline: WaitDeadline) -> [PortCaptureRecord] {
        var parker: Parker?
        while true {
            let (taken, wait) = state.withLockedValue { state -> ([PortCaptureRecord], Parker?) in
                if !state.records.isEmpty {
                    state.waiter = nil
                    let count = min(limit, state.records.count)
                    var taken: [PortCaptureRecord] = []
                    taken.reserveCapacity(count)
                    for _ in 0..<count { taken.append(state.records.removeFirst()) }
                    return (taken, nil)
                }
                if state.ended { return ([], nil) }
                if case .immediately = deadline { return ([], nil) }
                let waiter = parker ?? Parker()
                state.waiter = waiter
                return ([], waiter)
            }
            guard let wait else { return taken }
            parker = wait
            if !wait.park(until: deadline) {
                // Timed out: one last look, and no waiter left behind.
                return state.withLockedValue { state in
                    if state.waiter === wait { state.waiter = nil }
                    let count = min(limit, state.records.count)
                    var taken: [PortCaptureRecord] = []
                    for _ in 0..<count { taken.append(state.records.removeFirst()) }
                    return taken
                }
            }
        }
    }

    /// Admissions seen, records dropped, records waiting, and whether it ended.
    package var counts: (admitted: UInt64, dropped: UInt64, waiting: Int, ended: Bool) {
        state.withLockedValue { ($0.admitted, $0.dropped, $0.records.count, $0.ended) }
    }
}
