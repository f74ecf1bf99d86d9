// Harbor — receiving at a full queue: a connection whose
// message arrives while the queue is at its limit is read no further until a
// slot frees (P12).
//
// The shared slot counter is a hint any sender can write
// (Memory/SharedSlots.swift): a process writing *room* into it in a loop
// makes honest senders take slots that are not there and send past the
// queue limit. Their messages were sent in good faith and must not be
// refused for it, and the queue must not grow past its limit either. So a
// counted message that arrives while the receiver's own count says the queue
// is full is *parked*: held beside the queue, in arrival order, and its
// connection leaves the port's readiness set, so nothing more is read from
// it. What its sender sends meanwhile waits in the kernel, in that
// connection's socket buffer, which only the processes holding that send
// right fill: when it is full their sends wait for room and time out by
// their own deadlines (RemoteRoute's `waitForRoom`). When a slot frees,
// parked messages join the queue first, oldest first, and a connection
// whose parked messages have all joined is read again.
//
// - The limit holds exactly for the queue; a connection has at most what
//   one pump read from it parked (the message that found the queue full,
//   and the read-ahead behind it: 33 messages).
// - Readiness stays exact: a paused connection is out of the epoll set
//   (`EPOLL_CTL_DEL`), so its waiting packets wake nobody; it is added back
//   when its last parked message joins the queue. Both happen under the
//   port's lock, so a pause and a resume never cross.
// - No wedge: a parked message exists only while counted messages are
//   queued (it parked because the queue was full), and each one handed out
//   frees a slot, which resumes them (the transport's `slotFreed` admits
//   them, told by the receiver's own `parked` count in the counter's private
//   words). A port that moves takes its parked messages along behind its
//   queue (`PortCore.moveOut`), its
//   connections with it; a port that dies drops them with its queue.
// - Honest traffic never parks: senders that take their slots never find
//   the queue full, so the usual path costs one load of a private word.
import DequeModule
import HarborSystem

/// Messages parked off a full queue, by connection, and the connections
/// paused for them (each paused connection has at least one), taking turns.
///
/// A freed slot goes to the connection whose turn it is, which then goes to
/// the back: each connection with parked messages gets one slot per round,
/// however many it has parked, so a sender flooding without slots delays
/// another by one message per round at most (P12).
///
/// **Thread safety:** none; it lives in the port's `PeerLedger`, under the
/// port's lock.
package struct ParkedMessages {
    package init() {}

    /// Per connection, in arrival order; a nil is the connection's end,
    /// read behind its parked messages: its closing counts after they join.
    private var byConnection: [UInt64: Deque<MessageContent?>] = [:]
    /// Connections with something parked, in turn.
    private var turns = Deque<UInt64>()
    /// Parked entries (messages and ends), every connection together.
    package private(set) var count = 0

    /// Whether connection `token` is paused: its next message must park too.
    package func isPaused(_ token: UInt64) -> Bool { byConnection.index(forKey: token) != nil }

    /// Connection `token`'s parked ends (at most one: a connection ends once).
    package func ends(of token: UInt64) -> Int {
        guard let index = byConnection.index(forKey: token) else { return 0 }
        return byConnection.values[index].reduce(0) { $0 + ($1 == nil ? 1 : 0) }
    }

    // A connection's entries change in place through `values[index]`, found
    // once by `index(forKey:)`: `byConnection[token]?.append(…)` goes through
    // the dictionary's `_modify` coroutine, whose frame is a `malloc` and a
    // `free` on every call (specialized, it is not inlined).

    /// Parks `content` from connection `token`; true when that connection
    /// was not paused before (the caller then pauses it).
    package mutating func park(_ content: consuming MessageContent, from token: UInt64) -> Bool {
        count += 1
        if let index = byConnection.index(forKey: token) {
            byConnection.values[index].append(content)
            return false
        }
        // Room for a few: a connection parks what one pump read from it.
        var entries = Deque<MessageContent?>(minimumCapacity: 4)
        entries.append(content)
        byConnection[token] = entries
        turns.append(token)
        return true
    }

    /// Parks connection `token`'s end behind its parked messages; false
    /// (nothing done) when it has none, and its closing counts at once.
    package mutating func parkEnd(of token: UInt64) -> Bool {
        guard let index = byConnection.index(forKey: token) else { return false }
        byConnection.values[index].append(nil)
        count += 1
        return true
    }

    /// Takes parked messages for `room` free slots, one counted message per
    /// connection per turn (uncounted ones and ends need no slot and come
    /// with it); returns them, the connection ends among them (whose
    /// closings the caller then counts), and the connections left with
    /// nothing parked (the caller reads them again).
    package mutating func release(room: Int) -> (messages: [MessageContent], ends: Int, resumed: [UInt64]) {
        var room = room
        var messages: [MessageContent] = []
        messages.reserveCapacity(Swift.min(room, count))
        var ends = 0
        var resumed: [UInt64] = []
        while room > 0, let token = turns.popFirst() {
            guard let index = byConnection.index(forKey: token) else {
                resumed.append(token)
                continue
            }
            var tookCounted = false
            while let first = byConnection.values[index].first {
                if first?.countsAgainstLimit == true {
                    if tookCounted || room == 0 { break }
                    room -= 1
                    tookCounted = true
                }
                byConnection.values[index].removeFirst()
                count -= 1
                if let content = first { messages.append(content) } else { ends += 1 }
            }
            if byConnection.values[index].isEmpty {
                byConnection.remove(at: index)
                resumed.append(token)
            } else {
                turns.append(token)
            }
        }
        return (messages, ends, resumed)
    }

    /// Whether nothing was ever parked, or all of it is gone and forgotten
    /// (no connection's list or turn left).
    package var isUnused: Bool { count == 0 && byConnection.isEmpty && turns.isEmpty }

    /// Takes every parked message (the port moves or dies), each
    /// connection's in its order.
    package mutating func removeAll() -> [MessageContent] {
        var messages: [MessageContent] = []
        for token in turns { messages += (byConnection[token] ?? []).compactMap { $0 } }
        byConnection.removeAll()
        turns.removeAll()
        count = 0
        return messages
    }
}
