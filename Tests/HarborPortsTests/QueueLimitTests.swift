// Harbor — P04: queue limits, blocking and timed sends, timed receives, dead names.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

@Suite(.deadline) struct QueueLimitTests {
    @Test func P04_defaultLimitIsFiveAndATryOnceSendFailsWithQueueFull() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            let send = receive.makeSendRight()
            #expect(receive.queueLimit == 5)
            for id in 0..<5 { try send.send(Message(id: Int32(id)), timeout: .zero) }
            let error = expectPortError(.queueFull) { try send.send(Message(id: 5, text: "sixth"), timeout: .zero) }
            #expect(error?.takeUndeliveredMessage()?.text == "sixth", "a failed send hands the message back")
            #expect(receive.status.queuedMessages == 5)
        }
    }

    @Test func P04_aTimedSendToAFullQueueTimesOutNoEarlier() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1)
            let send = receive.makeSendRight()
            try send.send(Message(id: 0))
            let start = MonotonicInstant.now
            expectPortError(.timedOut) { try send.send(Message(id: 1), timeout: .milliseconds(50)) }
            let waited = MonotonicInstant.now.nanoseconds - start.nanoseconds
            #expect(waited >= 50_000_000, "gave up after \(waited) ns")
            #expect(waited < 2_000_000_000)
        }
    }

    @Test func P04_aBlockedSendProceedsWhenTheReceiverMakesRoom() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1)
            let send = receive.makeSendRight()
            try send.send(Message(id: 0))
            let sender = TestThread { () -> String in
                do { try send.send(Message(id: 1)); return "sent" } catch { return "\(error)" }
            }
            #expect(!sender.isDone(within: 0.05), "the sender must wait while the queue is full")
            #expect(try receive.receive(timeout: .seconds(5)).id == 0)
            #expect(sender.join() == "sent")
            #expect(try receive.receive(timeout: .seconds(5)).id == 1)
        }
    }

    @Test func P04_sendOnceMessagesDoNotCountAgainstTheLimit() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1)
            try receive.makeSendRight().send(Message(id: 0))
            for id in 1...10 { try receive.makeSendOnceRight().send(Message(id: Int32(id))) }
            #expect(receive.status.queuedMessages == 11)
            expectPortError(.queueFull) { try receive.makeSendRight().send(Message(id: 99), timeout: .zero) }
        }
    }

    @Test func P04_limitIsSettableUpTo1024AndNoFurther() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1024)
            #expect(receive.queueLimit == 1024)
            let send = receive.makeSendRight()
            for id in 0..<1024 { try send.send(Message(id: Int32(id)), timeout: .zero) }
            expectPortError(.queueFull) { try send.send(Message(id: 1024), timeout: .zero) }
            expectPortError(.invalidArgument) { try receive.setQueueLimit(1025) }
            expectPortError(.invalidArgument) { try receive.setQueueLimit(-1) }
            #expect(receive.queueLimit == 1024)
        }
    }

    @Test func P04_raisingTheLimitReleasesBlockedSenders() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1)
            let send = receive.makeSendRight()
            try send.send(Message(id: 0))
            let sender = TestThread { (try? send.send(Message(id: 1))) != nil }
            #expect(!sender.isDone(within: 0.05))
            try receive.setQueueLimit(2)
            #expect(sender.join())
            #expect(receive.status.queuedMessages == 2)
        }
    }

    @Test func P04_aReceiveWaitsUpToItsTimeout() throws {
        expectNoDescriptorLeak {
            let receive = ReceiveRight()
            expectPortError(.timedOut) { _ = try receive.receive(timeout: .zero) }
            let start = MonotonicInstant.now
            expectPortError(.timedOut) { _ = try receive.receive(timeout: .milliseconds(30)) }
            #expect(MonotonicInstant.now.nanoseconds - start.nanoseconds >= 30_000_000)
        }
    }

    @Test func P04_aBlockedReceiveWakesWhenAMessageArrives() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            let send = receive.makeSendRight()
            let sender = TestThread { () -> Bool in
                (try? send.send(Message(id: 77))) != nil
            }
            #expect(try receive.receive(timeout: .seconds(10)).id == 77)
            #expect(sender.join())
        }
    }

    @Test func P04_sendingToADestroyedPortIsADeadNameError() throws {
        try expectNoDescriptorLeak { () throws in
            let send: SendRight
            let once: SendOnceRight
            do {
                let receive = ReceiveRight()
                send = receive.makeSendRight()
                once = receive.makeSendOnceRight()
            }
            #expect(send.isDead)
            let error = expectPortError(.deadName) { try send.send(Message(id: 1, text: "lost?")) }
            #expect(error?.takeUndeliveredMessage()?.text == "lost?")
            do throws(PortError) {
                try once.send(Message(id: 2))
                Issue.record("a send-once right to a dead port must fail")
            } catch {
                #expect(error.code == .deadName)
            }
        }
    }

    @Test func P04_sendersBlockedOnAFullQueueGetDeadNameWhenThePortDies() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1)
            let send = receive.makeSendRight()
            try send.send(Message(id: 0))
            let sender = TestThread { () -> PortError.Code? in
                do { try send.send(Message(id: 1)); return nil } catch let error as PortError { return error.code } catch { return nil }
            }
            #expect(!sender.isDone(within: 0.05))
            receive.destroy()
            #expect(sender.join() == .deadName)
        }
    }

    @Test func P04_manySendersOneReceiverLoseNothingAndKeepPerSenderOrder() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(4)
            let send = receive.makeSendRight()
            let senders = (0..<4).map { sender in
                TestThread { () -> Bool in
                    for index in 0..<2_000 {
                        guard (try? send.send(Message(id: Int32(sender * 1_000_000 + index)))) != nil else { return false }
                    }
                    return true
                }
            }
            var next = [Int](repeating: 0, count: 4)
            for _ in 0..<8_000 {
                let id = Int(try receive.receive(timeout: .seconds(10)).id)
                let (sender, index) = (id / 1_000_000, id % 1_000_000)
                #expect(index == next[sender], "sender \(sender) out of order")
                next[sender] = index + 1
            }
            #expect(senders.allSatisfy { $0.join() })
            #expect(next == [2_000, 2_000, 2_000, 2_000])
        }
    }
}

@Suite(.deadline) struct ParkerTests {
    /// A parker reused after a wake-up must sleep again rather than return at
    /// once: the blocked-sender loop reuses one parker across retries.
    @Test func P04_aParkerConsumesItsWakeUp() {
        expectNoDescriptorLeak {
            let parker = Parker()
            parker.unpark()
            #expect(parker.park(until: WaitDeadline(timeout: .seconds(5))))
            let start = MonotonicInstant.now
            #expect(!parker.park(until: WaitDeadline(timeout: .milliseconds(20))))
            #expect(MonotonicInstant.now.nanoseconds - start.nanoseconds >= 20_000_000)
        }
    }

    /// Three senders contend for a queue of one; every message must arrive.
    @Test func P04_contendingBlockedSendersAreAllWokenInTurn() throws {
        try expectNoDescriptorLeak { () throws in
            let receive = ReceiveRight()
            try receive.setQueueLimit(1)
            let send = receive.makeSendRight()
            let senders = (0..<3).map { sender in
                TestThread { () -> Bool in
                    for index in 0..<3_000 {
                        guard (try? send.send(Message(id: Int32(sender * 10_000 + index)))) != nil else { return false }
                    }
                    return true
                }
            }
            for _ in 0..<9_000 { _ = try receive.receive(timeout: .seconds(10)) }
            #expect(senders.allSatisfy { $0.join() })
        }
    }
}
