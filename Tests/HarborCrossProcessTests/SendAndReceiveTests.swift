// Harbor — P07: Mach's combined send-and-receive (SendRight.sendAndReceive) with a real peer process.
import Glibc
import Harbor
import HarborPeerCommands
import HarborTestSupport
import Testing

@Suite(.serialized, .deadline(.seconds(120)))
struct SendAndReceiveCrossProcessTests {
    @Test func P07_sendAndReceiveMakesARoundTripToAnotherProcess() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let reply = try peer.port.sendAndReceive(Message(id: PeerCommand.echo, text: "ping"), timeout: .seconds(30))
            #expect(reply.id == PeerCommand.echo)
            #expect(reply.text == "ping")
            #expect(reply.trailer.sender.pid == peer.pid, "the reply came from the peer")
            // The reusable form: one reply port, a fresh send-once right each call.
            let replyPort = ReceiveRight()
            for index in 0..<3 {
                var request = Message(id: PeerCommand.echo, text: "call \(index)")
                request.setReplyRight(replyPort.makeSendOnceRight())
                let answer = try peer.port.sendAndReceive(request, replyPort: replyPort, timeout: .seconds(30))
                #expect(answer.text == "call \(index)")
            }
            peer.stop()
        }
    }

    /// The peer stops receiving with a queue limit of 1: the first call's
    /// request fills the queue and the call times out waiting for the reply
    /// (no message in the error); the second call's send times out (the
    /// request in the error, and nothing taken from the reply port).
    @Test func P07_eachPhaseTimesOutAcrossProcessesAndAFailedSendReceivesNothing() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            let peer = try Peer(home: home)
            let stalled = try peer.request(Message(id: PeerCommand.stall, text: "1"))
            #expect(stalled.text == "stalled")
            var start = ContinuousClock.now
            do throws(PortError) {
                _ = try peer.port.sendAndReceive(Message(id: 40), timeout: .milliseconds(200))
                Issue.record("a stalled peer answered")
            } catch {
                #expect(error.code == .timedOut)
                #expect(error.takeUndeliveredMessage()?.id == nil, "the request was sent: the receive timed out")
            }
            #expect(ContinuousClock.now - start >= .milliseconds(200))
            let replyPort = ReceiveRight()
            try replyPort.makeSendRight().send(Message(id: 77, text: "stale"))
            var request = Message(id: 41, text: "second")
            request.setReplyRight(replyPort.makeSendOnceRight())
            start = ContinuousClock.now
            do throws(PortError) {
                _ = try peer.port.sendAndReceive(request, replyPort: replyPort, timeout: .milliseconds(200))
                Issue.record("a full queue took the request")
            } catch {
                #expect(error.code == .timedOut)
                #expect(error.takeUndeliveredMessage()?.text == "second", "the send timed out: the request comes back")
            }
            #expect(ContinuousClock.now - start >= .milliseconds(200))
            #expect(replyPort.tryReceive()?.id == 77, "a failed send receives nothing")
            peer.kill()
        }
    }

    /// A server process that dies holding the request: the caller's reply
    /// is the send-once notification (Darwin's MIG_SERVER_DIED), not a hang.
    @Test func P07_aServerKilledHoldingTheRequestAnswersWithASendOnceNotification() throws {
        try expectNoDescriptorLeak {
            let home = ReceiveRight()
            var peer = try Peer(home: home)
            _ = try peer.request(Message(id: PeerCommand.stall, text: "5"))
            let port = peer.port
            let pid = peer.pid
            let caller = TestThread { () -> String in
                do throws(PortError) {
                    let reply = try port.sendAndReceive(Message(id: 42), timeout: .seconds(30))
                    guard case .sendOnce = reply.notification else { return "message \(reply.id)" }
                    return "send-once notification"
                } catch {
                    return "\(error.code)"
                }
            }
            #expect(!caller.isDone(within: 0.3), "the stalled peer holds the request unanswered")
            Glibc.kill(pid, SIGKILL)
            #expect(caller.join() == "send-once notification")
            _ = peer.waitForExit()
        }
    }
}
