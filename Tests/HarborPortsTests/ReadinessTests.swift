// Harbor — the one idea: a port's receive side is a descriptor that polls
// readable exactly while a message waits.
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport

@Suite(.deadline) struct ReadinessTests {
    @Test func P01_receiveSideIsReadableExactlyWhileAMessageWaits() throws {
        try expectNoDescriptorLeak {
            let port = ReceiveRight()
            let send = port.makeSendRight()
            try port.withReadinessDescriptor { fd in
                #expect(!isReadable(fd))
                try send.send(Message(id: 1))
                #expect(isReadable(fd))
                try send.send(Message(id: 2))
                _ = try port.receive(timeout: .zero)
                #expect(isReadable(fd), "one message still waits")
                _ = try port.receive(timeout: .zero)
                #expect(!isReadable(fd))
            }
        }
    }

    @Test func P01_aDescriptorMadeAfterMessagesQueuedStartsReadable() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            try port.makeSendRight().send(Message(id: 1))
            try port.withReadinessDescriptor { fd in #expect(isReadable(fd)) }
        }
    }

    @Test func P01_theDescriptorIsCreatedOnceAndClosedWithThePort() throws {
        try expectNoDescriptorLeak {
            let before = openDescriptorCount()
            let port = ReceiveRight()
            #expect(openDescriptorCount() == before, "a port costs no descriptor until something waits")
            let first = try port.withReadinessDescriptor { $0 }
            let second = try port.withReadinessDescriptor { $0 }
            #expect(first == second)
            // An epoll set over the port's eventfd: decided up front, so the
            // sockets of senders in other processes can join it later.
            #expect(openDescriptorCount() == before + 2)
            port.destroy()
            #expect(openDescriptorCount() == before)
        }
    }

    /// Senders write the eventfd after dropping the port lock; this races
    /// many senders against a receiver and checks that, once everything has
    /// settled, the descriptor again says exactly whether a message waits.
    @Test func P01_readinessIsExactAgainAfterRacingSendsAndReceives() throws {
        try expectNoDescriptorLeak { () throws in
            let port = ReceiveRight()
            let fd = try port.withReadinessDescriptor { $0 }
            let send = port.makeSendRight()
            for round in 0..<20 {
                let senders = (0..<3).map { sender in
                    TestThread { () -> Bool in
                        for index in 0..<500 {
                            guard (try? send.send(Message(id: Int32(sender * 1000 + index)))) != nil else { return false }
                        }
                        return true
                    }
                }
                for _ in 0..<1_500 { _ = try port.receive(timeout: .seconds(10)) }
                #expect(senders.allSatisfy { $0.join() })
                #expect(port.status.queuedMessages == 0)
                guard !isReadable(fd) else {
                    Issue.record("round \(round): readable with an empty queue")
                    return
                }
                try send.send(Message(id: -1))
                guard isReadable(fd) else {
                    Issue.record("round \(round): not readable with a message waiting")
                    return
                }
                _ = try port.receive(timeout: .zero)
            }
        }
    }
}
