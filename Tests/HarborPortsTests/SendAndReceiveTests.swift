// Harbor — P04/P06: Mach's combined send-and-receive (SendRight.sendAndReceive) between threads.
import Glibc
import HarborTestSupport
import Testing
@testable import HarborPorts
@testable import HarborTransport
import HarborSystem

@Suite(.deadline) struct SendAndReceiveTests {
    /// A port a server thread receives on (a `~Copyable` right cannot be
    /// captured by the thread's closure; a class holding it can).
    private final class Service: Sendable {
        let port = ReceiveRight()
    }

    /// A server thread that answers `count` requests with id + 100 and the
    /// request's text, noting whether each carried a send-once reply right.
    private static func server(_ service: Service, count: Int) -> TestThread<[String]> {
        TestThread {
            var seen: [String] = []
            for _ in 0..<count {
                guard var request = try? service.port.receive(timeout: .seconds(10)) else { seen.append("timeout"); break }
                seen.append("\(request.id):\(request.hasReplyRight)")
                let text = request.text
                do { try request.reply(Message(id: request.id + 100, text: text)) } catch { seen.append(String(describing: (error as? PortError)?.code)) }
            }
            return seen
        }
    }

    @Test func P04_sendAndReceiveSendsWithASendOnceReplyRightAndReturnsTheReply() throws {
        try expectNoDescriptorLeak { () throws in
            let service = Service()
            let send = service.port.makeSendRight()
            let server = Self.server(service, count: 2)
            let first = try send.sendAndReceive(Message(id: 1, text: "ping"), timeout: .seconds(10))
            #expect(first.id == 101)
            #expect(first.text == "ping")
            // The reusable form: the caller's reply right and port, as msgh_local_port.
            let replyPort = ReceiveRight()
            var request = Message(id: 2, text: "again")
            request.setReplyRight(replyPort.makeSendOnceRight())
            let second = try send.sendAndReceive(request, replyPort: replyPort, timeout: .seconds(10))
            #expect(second.id == 102)
            #expect(server.join() == ["1:true", "2:true"])
        }
    }

    @Test func P04_aFailedSendReceivesNothingAndGivesTheRequestBackAsPassed() throws {
        try expectNoDescriptorLeak { () throws in
            let service = ReceiveRight()
            try service.setQueueLimit(1)
            let send = service.makeSendRight()
            try send.send(Message(id: 0), timeout: .zero)
            let error = expectPortError(.queueFull) { _ = try send.sendAndReceive(Message(id: 7, text: "req"), timeout: .zero) }
            if let unsent = error?.takeUndeliveredMessage() {
                #expect(unsent.id == 7)
                #expect(unsent.text == "req")
                #expect(unsent.hasReplyRight == false, "the call's own reply right is not handed back")
            } else {
                Issue.record("the request was not given back")
            }
            // With the caller's reply port: a message already waiting there
            // is not taken when the send fails (Darwin receives nothing).
            let replyPort = ReceiveRight()
            try replyPort.makeSendRight().send(Message(id: 55, text: "already there"))
            let timed = expectPortError(.timedOut) {
                var request = Message(id: 8)
                request.setReplyRight(replyPort.makeSendOnceRight())
                _ = try send.sendAndReceive(request, replyPort: replyPort, timeout: .milliseconds(30))
            }
            #expect(timed?.takeUndeliveredMessage()?.hasReplyRight == true, "the request comes back as passed")
            #expect(replyPort.tryReceive()?.id == 55)
            #expect(service.status.queuedMessages == 1)
        }
    }

    @Test func P04_aRequestCarryingItsOwnReplyRightIsRefusedByTheOwnPortForm() throws {
        try expectNoDescriptorLeak { () throws in
            let service = ReceiveRight()
            let elsewhere = ReceiveRight()
            let error = expectPortError(.invalidRight) {
                var request = Message(id: 9)
                request.setReplyRight(elsewhere.makeSendOnceRight())
                _ = try service.makeSendRight().sendAndReceive(request, timeout: .seconds(1))
            }
            #expect(error?.takeUndeliveredMessage()?.hasReplyRight == true)
            #expect(service.status.queuedMessages == 0, "nothing was sent")
        }
    }

    /// One deadline covers both phases: a send that waited 400 ms for room
    /// leaves 200 ms for the reply, so the call gives up near 600 ms. Darwin's
    /// per-phase timeout would give up near 1,000 ms.
    @Test func P04_oneTimeoutCoversTheSendAndTheReceive() throws {
        try expectNoDescriptorLeak { () throws in
            let service = Service()
            try service.port.setQueueLimit(1)
            let send = service.port.makeSendRight()
            try send.send(Message(id: 0))
            let start = MonotonicInstant.now
            let roomMaker = TestThread { () -> [Int32] in
                Glibc.usleep(400_000)
                // Make room, then take the request but never answer until the call is over.
                let first = (try? service.port.receive(timeout: .seconds(5)))?.id ?? -1
                guard let request = try? service.port.receive(timeout: .seconds(5)) else { return [first, -1] }
                Glibc.usleep(800_000)
                // Read after the sleep, so the request (and its reply right) is held until then.
                return [first, request.hasReplyRight ? 1 : 0]
            }
            let error = expectPortError(.timedOut) { _ = try send.sendAndReceive(Message(id: 1), timeout: .milliseconds(600)) }
            let waited = (MonotonicInstant.now.nanoseconds - start.nanoseconds) / 1_000_000
            #expect(error?.takeUndeliveredMessage()?.id == nil, "the send went through: the receive timed out")
            #expect(waited >= 600, "gave up after \(waited) ms")
            #expect(waited < 900, "gave up after \(waited) ms: the timeout applied to each phase")
            #expect(roomMaker.join() == [0, 1])
        }
    }

    @Test func P06_aLateReplyFindsTheCallsReplyPortGone() throws {
        try expectNoDescriptorLeak { () throws in
            let service = Service()
            let send = service.port.makeSendRight()
            let lateServer = TestThread { () -> String in
                guard var request = try? service.port.receive(timeout: .seconds(10)) else { return "no request" }
                Glibc.usleep(200_000)  // past the caller's timeout
                do { try request.reply(Message(id: 1)); return "delivered" } catch { return (error as? PortError)?.code.description ?? "\(error)" }
            }
            expectPortError(.timedOut) { _ = try send.sendAndReceive(Message(id: 1), timeout: .milliseconds(50)) }
            #expect(lateServer.join() == "dead name")
        }
    }

    @Test func P06_aServerThatDropsTheReplyRightAnswersWithASendOnceNotification() throws {
        try expectNoDescriptorLeak { () throws in
            let service = Service()
            let send = service.port.makeSendRight()
            let dropper = TestThread { () -> Bool in
                (try? service.port.receive(timeout: .seconds(10)))?.hasReplyRight == true  // dropped unanswered
            }
            let reply = try send.sendAndReceive(Message(id: 3), timeout: .seconds(10))
            guard case .sendOnce = reply.notification else {
                Issue.record("expected a send-once notification, got message \(reply.id)")
                return
            }
            #expect(dropper.join())
        }
    }
}
