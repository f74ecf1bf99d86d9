// Harbor — a port's rules as a pure state machine.
//
// No locks, no system calls, no callouts: each event returns what the caller
// (PortCore, which holds this in a HarborLock) must do once the lock is released:
// signal readiness, wake a blocked sender, deliver a notification, release
// the rights of drained messages. Tests drive it without a kernel.

import DequeModule
import HarborSystem

package struct PortStateMachine {
    /// Mach's default queue limit (`MACH_PORT_QLIMIT_DEFAULT`).
    package static let defaultQueueLimit = 5
    /// Mach's largest queue limit (`MACH_PORT_QLIMIT_MAX`).
    package static let maximumQueueLimit = 1024

    package private(set) var queue = Deque<MessageContent>()
    /// Queued messages that count against the limit (not send-once ones).
    package private(set) var countedMessages = 0
    package private(set) var queueLimit = PortStateMachine.defaultQueueLimit
    package private(set) var sendRights = 0
    package private(set) var sendOnceRights = 0
    /// Send rights ever made (Mach's make-send count).
    package private(set) var madeSendRights: UInt64 = 0
    package private(set) var sequenceNumber: UInt64 = 0
    package private(set) var isDead = false

    private var noSendersRequest: SendOnceToken?
    private var portDestroyedRequest: SendOnceToken?
    private var deadNameRequests: [SendOnceToken] = []
    private var blockedSenders = Deque<Parker>()

    package init() {}

    // MARK: Queue

    package enum EnqueueOutcome {
        /// Queued; `becameReadable` when the queue went from empty to not.
        case enqueued(becameReadable: Bool)
        /// At the limit; nothing was queued.
        case full
        /// The receive right is gone; nothing was queued.
        case dead
    }

    /// Queues `content`. With `slotReserved` the sender already holds a slot
    /// of the port's shared counter (Memory/SharedSlots.swift), which is then
    /// the limit's keeper, so only the count is kept here.
    package mutating func enqueue(_ content: consuming MessageContent, slotReserved: Bool = false) -> EnqueueOutcome {
        if isDead { return .dead }
        if content.countsAgainstLimit {
            if !slotReserved && countedMessages >= queueLimit { return .full }
            countedMessages += 1
        }
        queue.append(consume content)
        return .enqueued(becameReadable: queue.count == 1)
    }

    /// `enqueue(_, slotReserved: true)` of every message in `batch`, in
    /// order, done by taking the batch's storage as the queue: only when the
    /// queue is empty, the port alive and the batch within `countedLimit`
    /// counted messages (false otherwise, `batch` untouched).
    package mutating func adoptBatch(_ batch: inout Deque<MessageContent>, countedLimit: Int) -> Bool {
        guard queue.isEmpty, !batch.isEmpty, !isDead else { return false }
        var counted = 0
        for content in batch where content.countsAgainstLimit { counted += 1 }
        guard countedMessages + counted <= countedLimit else { return false }
        countedMessages += counted
        swap(&queue, &batch)
        return true
    }

    /// `~Copyable` so it is only ever moved: a copy would retain and release
    /// the message's buffers, and this passes through two locked closures.
    package struct Dequeued: ~Copyable {
        package var content: MessageContent
        /// The queue is now empty: readiness must be cleared.
        package var becameEmpty: Bool
        /// A sender blocked on a full queue that may now proceed.
        package var senderToWake: Parker?
    }

    package mutating func dequeue(receivingPort: PortName) -> Dequeued? {
        guard var content = queue.popFirst() else { return nil }
        var wake: Parker?
        if content.countsAgainstLimit {
            countedMessages -= 1
            wake = blockedSenders.popFirst()
        }
        sequenceNumber += 1
        content.stampReceipt(sequenceNumber: sequenceNumber, port: receivingPort)
        return Dequeued(content: consume content, becameEmpty: queue.isEmpty, senderToWake: wake)
    }

    /// Exactly `enqueue(content, slotReserved: true)` then `dequeue` on an
    /// empty queue, without passing through the queue (no copies of the
    /// content into and out of the deque). Nil when the port is dead (the
    /// message is dropped, as enqueue would refuse it).
    package mutating func passThrough(
        _ content: consuming MessageContent, receivingPort: PortName
    ) -> Dequeued? {
        if isDead { return nil }
        var wake: Parker?
        if content.countsAgainstLimit { wake = blockedSenders.popFirst() }
        sequenceNumber += 1
        content.stampReceipt(sequenceNumber: sequenceNumber, port: receivingPort)
        return Dequeued(content: consume content, becameEmpty: true, senderToWake: wake)
    }

    /// What a receive right takes along when it moves to another process.
    package struct Moving {
        package var queue: Deque<MessageContent>
        package var limit: Int
        package var sequenceNumber: UInt64
        package var made: UInt64
        package var blocked: Deque<Parker>
        /// The notification requests travel with the right (their send-once
        /// rights move with it), as Mach keeps them on the port.
        package var noSenders: SendOnceToken?
        package var portDestroyed: SendOnceToken?
    }

    /// Takes the whole queue, the attributes and the notification requests
    /// for a receive right that moves to another process; the machine keeps
    /// counting local rights.
    package mutating func takeForMove() -> Moving {
        defer {
            queue.removeAll()
            countedMessages = 0
            blockedSenders.removeAll()
            noSendersRequest = nil
            portDestroyedRequest = nil
        }
        return Moving(queue: queue, limit: queueLimit, sequenceNumber: sequenceNumber, made: madeSendRights,
                      blocked: blockedSenders, noSenders: noSendersRequest, portDestroyed: portDestroyedRequest)
    }

    /// Puts back what `takeForMove` took, after the send that carried the
    /// receive right failed: the queue (whose messages still hold their
    /// shared slots) in front, and the requests unless new ones were made
    /// meanwhile. Returns the requests that lost (to release outside the lock)
    /// and whether the queue became non-empty.
    package mutating func restoreAfterFailedMove(
        _ moving: Moving
    ) -> (released: [SendOnceToken], becameReadable: Bool) {
        let wasEmpty = queue.isEmpty
        for content in moving.queue.reversed() {
            if content.countsAgainstLimit { countedMessages += 1 }
            queue.prepend(content)
        }
        var released: [SendOnceToken] = []
        if let target = moving.noSenders {
            if noSendersRequest == nil { noSendersRequest = target } else { released.append(target) }
        }
        if let target = moving.portDestroyed {
            if portDestroyedRequest == nil { portDestroyedRequest = target } else { released.append(target) }
        }
        return (released, wasEmpty && !queue.isEmpty)
    }

    /// Counts a connection that stands for send rights already counted
    /// elsewhere (a failed move's forwarder): its closing balances this.
    package mutating func connectionAdopted() { sendRights += 1 }

    /// Installs a moved-in port's attributes.
    package mutating func adopt(limit: Int, sequenceNumber: UInt64, made: UInt64) {
        queueLimit = limit
        self.sequenceNumber = sequenceNumber
        madeSendRights = max(madeSendRights, made)
    }

    /// A sender found the queue full and will park until woken.
    package mutating func senderWillBlock(_ parker: Parker) {
        blockedSenders.append(parker)
    }

    /// A sender gave up waiting; returns false if a receiver had already
    /// popped it (so a slot was offered to it and it must try once more).
    package mutating func senderStoppedWaiting(_ parker: Parker) -> Bool {
        guard let index = blockedSenders.firstIndex(where: { $0 === parker }) else { return false }
        blockedSenders.remove(at: index)
        return true
    }

    /// Changes the limit; returns the blocked senders that should retry.
    package mutating func setQueueLimit(_ limit: Int) -> [Parker] {
        queueLimit = limit
        let woken = Array(blockedSenders)
        blockedSenders.removeAll()
        return woken
    }

    // MARK: Rights

    package mutating func sendRightMade() {
        sendRights += 1
        madeSendRights += 1
    }

    /// Returns the no-senders notification target when this was the last send right.
    package mutating func sendRightReleased() -> SendOnceToken? {
        sendRights -= 1
        guard sendRights == 0, !isDead else { return nil }
        defer { noSendersRequest = nil }
        return noSendersRequest
    }

    package mutating func sendOnceMade() { sendOnceRights += 1 }
    package mutating func sendOnceReleased() { sendOnceRights -= 1 }

    // MARK: Notification requests

    /// Registers the no-senders target; returns the one it replaces (to be
    /// released, outside the lock). Fires when the send-right count next
    /// drops to zero, as Mach does with a make-send count of zero.
    package mutating func requestNoSenders(_ target: SendOnceToken) -> SendOnceToken? {
        defer { noSendersRequest = target }
        return noSendersRequest
    }

    /// Whether a no-senders notification is asked for (its connections'
    /// hang-ups are then watched: PortTransport+HangUps.swift).
    package var hasNoSendersRequest: Bool { noSendersRequest != nil }
    /// Whether a port-destroyed notification is asked for (`harbor ports`).
    package var hasPortDestroyedRequest: Bool { portDestroyedRequest != nil }
    /// Dead-name notifications asked for (`harbor ports`).
    package var deadNameRequestCount: Int { deadNameRequests.count }

    package mutating func requestPortDestroyed(_ target: SendOnceToken) -> SendOnceToken? {
        defer { portDestroyedRequest = target }
        return portDestroyedRequest
    }

    /// Registers a dead-name target; if the port is already dead, hands it
    /// straight back to be notified at once.
    package mutating func requestDeadName(_ target: SendOnceToken) -> SendOnceToken? {
        if isDead { return target }
        deadNameRequests.append(target)
        return nil
    }

    // MARK: Death of the receive right

    package enum ReceiveRightOutcome {
        /// A port-destroyed request takes the receive right instead of death.
        case handOff(to: SendOnceToken)
        case destroyed(Destruction)
    }

    /// Everything the caller must release or notify, outside the lock.
    package struct Destruction {
        package var drained: Deque<MessageContent>
        package var deadNameTargets: [SendOnceToken]
        package var noSendersTarget: SendOnceToken?
        package var blockedSenders: Deque<Parker>
    }

    package mutating func receiveRightReleased() -> ReceiveRightOutcome {
        if let target = portDestroyedRequest {
            portDestroyedRequest = nil
            return .handOff(to: target)
        }
        return .destroyed(destroy())
    }

    /// Kills the port: no further sends are accepted, and every waiter and
    /// requester is handed back for notification.
    package mutating func destroy() -> Destruction {
        isDead = true
        let destruction = Destruction(
            drained: queue, deadNameTargets: deadNameRequests,
            noSendersTarget: noSendersRequest, blockedSenders: blockedSenders)
        queue.removeAll()
        countedMessages = 0
        deadNameRequests.removeAll()
        noSendersRequest = nil
        blockedSenders.removeAll()
        return destruction
    }
}
