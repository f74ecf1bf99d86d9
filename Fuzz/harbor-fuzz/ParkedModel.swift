// Harbor fuzzing — parked messages as HarborPorts' ParkedMessages.swift describes them:
// the `ledger` target's model of `ParkedMessages`.
import HarborSystem
import HarborTransport

/// Per connection its parked messages (an id and whether it counts) and
/// ends (nil), in order; connections take turns, one counted message each
/// per turn, uncounted messages and ends coming with it.
struct ParkedModel {
    private var byConnection: [UInt64: [(id: Int32, counted: Bool)?]] = [:]
    private var turns: [UInt64] = []
    private(set) var count = 0
    private(set) var nextID: Int32 = 1

    func isPaused(_ token: UInt64) -> Bool { byConnection[token] != nil }

    /// True when the connection was not paused before.
    mutating func park(counted: Bool, from token: UInt64) -> Bool {
        defer { nextID &+= 1; count += 1 }
        if byConnection[token] != nil {
            byConnection[token]!.append((nextID, counted))
            return false
        }
        byConnection[token] = [(nextID, counted)]
        turns.append(token)
        return true
    }

    mutating func parkEnd(of token: UInt64) -> Bool {
        guard byConnection[token] != nil else { return false }
        byConnection[token]!.append(nil)
        count += 1
        return true
    }

    mutating func release(room: Int) -> (messages: [Int32], ends: Int, resumed: [UInt64]) {
        var room = room, messages: [Int32] = [], ends = 0, resumed: [UInt64] = []
        while room > 0, !turns.isEmpty {
            let token = turns.removeFirst()
            var entries = byConnection[token] ?? []
            var tookCounted = false
            while let first = entries.first {
                if let message = first, message.counted {
                    if tookCounted || room == 0 { break }
                    room -= 1
                    tookCounted = true
                }
                entries.removeFirst()
                count -= 1
                if let message = first { messages.append(message.id) } else { ends += 1 }
            }
            if entries.isEmpty {
                byConnection[token] = nil
                resumed.append(token)
            } else {
                byConnection[token] = entries
                turns.append(token)
            }
        }
        return (messages, ends, resumed)
    }

    /// Every parked message's id, each connection's in order, by turns.
    mutating func removeAll() -> [Int32] {
        let ids = turns.flatMap { (byConnection[$0] ?? []).compactMap { $0?.id } }
        byConnection.removeAll()
        turns.removeAll()
        count = 0
        return ids
    }
}
