// Harbor — what arrived for a port from other processes, handed to the port
// in one admission call (PortCore+Admission.swift).
import DequeModule
import HarborSystem

/// Messages another process sent, in arrival order, with the connection
/// each came from and the connections that ended behind them: what one pump
/// of a port's connections read, or the queue a receive right brought along.
/// The transport fills it; ``PortCore/admit(_:from:)`` takes it whole.
///
/// `~Copyable`: messages are moved along, never copied (each copy of a
/// message costs a retain and a release of every buffer it holds).
@usableFromInline
package struct PortArrivals: ~Copyable, Sendable {
    /// A connection that ended after what it delivered here.
    @usableFromInline
    package struct Ending: Sendable {
        /// The connection's epoll token.
        package var token: UInt64
        /// A send-once connection (one message at most), else a send one.
        package var isSendOnce: Bool
        /// For a send-once connection: whether its message came.
        package var used: Bool

        package init(token: UInt64, isSendOnce: Bool, used: Bool) {
            self.token = token
            self.isSendOnce = isSendOnce
            self.used = used
        }
    }

    /// Where the messages come from, which decides how a full queue takes them.
    @usableFromInline
    package enum Source: Sendable {
        /// Read from the port's connections: a counted message that finds the
        /// queue full is parked, its connection paused (ParkedMessages.swift).
        case connections
        /// A queue moved in with a receive right: queued past the limit if
        /// need be, charged to its uid (its old holder may have parked some).
        case movedQueue
    }

    /// The first message (the usual pump: one message, no array), which
    /// alone may skip the queue (`takeFirst`).
    @usableFromInline package var first: MessageContent?
    /// The connection the first message came from.
    @usableFromInline package var firstFrom: UInt64 = 0
    /// Messages after the first (a read-ahead), queued under the same lock.
    /// Nil until a second message arrives: an empty deque still holds (and
    /// retains) a shared storage object.
    @usableFromInline package var batch: Deque<MessageContent>?
    /// The connection each message of `batch` came from, as runs.
    @usableFromInline package var batchFrom = ConnectionRuns()
    /// Connections that ended, in order, after their messages (nil: none,
    /// and no array to release).
    @usableFromInline package var endings: [Ending]?
    /// With the queue empty, the first message goes straight to the caller.
    @usableFromInline package let takeFirst: Bool
    @usableFromInline package let source: Source

    @inlinable @inline(__always)
    package init(takeFirst: Bool = false, source: Source = .connections) {
        self.takeFirst = takeFirst
        self.source = source
    }

    /// A moved-in queue's messages, in order.
    package init(movedQueue messages: consuming [MessageContent]) {
        self.init(source: .movedQueue)
        if messages.isEmpty { return }
        var batch = Deque<MessageContent>()
        batch.reserveCapacity(messages.count)
        for content in messages { batch.append(content) }
        self.batch = batch
    }

    /// Whether anything arrived.
    package var isEmpty: Bool { first == nil && batch == nil && endings == nil }

    /// Appends a message from connection `token`.
    @inlinable @inline(__always)
    package mutating func append(message content: consuming MessageContent, from token: UInt64, reserving: Int) {
        if first == nil {
            first = consume content
            firstFrom = token
            return
        }
        batchFrom.append(token)
        if batch == nil {
            var batch = Deque<MessageContent>()
            batch.reserveCapacity(reserving)
            self.batch = batch
        }
        batch!.append(consume content)
    }

    /// Appends a connection's end, behind what it delivered.
    package mutating func append(_ ending: Ending) {
        // In place: `(endings ?? []) + [ending]` made two arrays a call.
        if endings == nil { endings = [] }
        endings!.append(ending)
    }
}

/// The connection (by epoll token) each message of a batch came from, as
/// runs. One run, and no allocation, unless several connections delivered
/// in one pump.
@usableFromInline
package struct ConnectionRuns: Sendable {
    /// Runs before the last, only when there are several (nil otherwise:
    /// no array, no reference count on the usual path).
    @usableFromInline var earlierRuns: [(token: UInt64, count: Int)]?
    @usableFromInline var lastToken: UInt64 = 0
    @usableFromInline var lastCount = 0

    @inlinable package init() {}

    @usableFromInline mutating func append(_ token: UInt64) {
        if lastCount > 0 && token != lastToken {
            // In place: `(earlierRuns ?? []) + [run]` made two arrays a run.
            if earlierRuns == nil {
                earlierRuns = []
                earlierRuns!.reserveCapacity(8)
            }
            earlierRuns!.append((lastToken, lastCount))
            lastCount = 0
        }
        lastToken = token
        lastCount += 1
    }

    /// The tokens, in order, read from the runs (no array of them).
    func tokens() -> Tokens { Tokens(runs: self) }

    /// The tokens of a batch, one a message, in order.
    struct Tokens: IteratorProtocol {
        private let runs: ConnectionRuns
        /// The run being read: an index into `earlierRuns`, then its count (the last run).
        private var run = 0
        /// Tokens of that run already given.
        private var given = 0

        init(runs: ConnectionRuns) { self.runs = runs }

        mutating func next() -> UInt64? {
            let earlier = runs.earlierRuns?.count ?? 0
            while run < earlier {
                let current = runs.earlierRuns![run]
                if given < current.count {
                    given += 1
                    return current.token
                }
                run += 1
                given = 0
            }
            guard given < runs.lastCount else { return nil }
            given += 1
            return runs.lastToken
        }
    }
}
