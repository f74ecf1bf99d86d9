// HarborXPC tests — a client that stops reading its replies loses its session, not a thread (X25).
import Glibc
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

extension XPCTests {
    @Suite struct ReplyTimeouts {
        /// Opens a session by hand, as a hostile client: its reply port
        /// `replies` (queue limit 1), which it never reads.
        static func connect(_ name: String, replies: borrowing ReceiveRight, _ bootstrap: BootstrapClient) throws -> SendRight {
            try replies.setQueueLimit(1)
            var connect = Message(id: XPCWire.connect)
            connect.attach(replies.makeSendRight())
            var accepted = try bootstrap.lookUp(name).sendAndReceive(connect, timeout: .seconds(10))
            #expect(accepted.id == XPCWire.accepted)
            return try accepted.takeSendRight(at: 0)
        }

        /// Makes numbered calls `numbers` (an `Ask` each) on `session`.
        static func call(_ session: SendRight, _ numbers: ClosedRange<Int>) throws {
            for number in numbers {
                var call = try MessageEncoder().encode(Ask(op: "echo", n: number), id: XPCWire.call)
                XPCWire.append(UInt64(number), to: &call)
                try session.send(call, timeout: .seconds(5))
            }
        }

        /// Whether the session's port dies within two seconds.
        static func isGone(_ session: SendRight) -> Bool {
            waitUntil(.seconds(2)) {
                do throws(PortError) {
                    try session.send(Message(id: 0), timeout: .zero)
                    return false
                } catch {
                    return error.code == .deadName
                }
            } != nil
        }

        /// X25: a client that opens a session by hand, gives a reply port
        /// it never reads (queue limit 1) and makes numbered calls stalls
        /// the reply to its second call; within the listener's reply
        /// timeout the reply is dropped and its session ends with
        /// `replyTimedOut` (its cancellation handler runs: the session's
        /// thread is free) and its session right dies, while a client that
        /// reads is answered before, meanwhile and after.
        @Test func X25_aClientThatStopsReadingRepliesLosesItsSessionWithinTheReplyTimeout() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ends = HarborLock<[XPCRichError]>([])
            let listener = try XPCListener(service: "com.example.x25", bootstrap: bootstrap,
                                           replyTimeout: .milliseconds(300)) { request in
                request.accept(incomingMessageHandler: { message in
                    Answer(n: (try? message.decode(as: Ask.self))?.n ?? -1, uid: 0, pid: 0, count: 0)
                }, cancellationHandler: { error in ends.withLock { $0.append(error) } })
            }
            let reader = try XPCSession(machService: "com.example.x25", bootstrap: bootstrap)
            #expect(try reader.sendSync(Ask(op: "echo", n: 1)).decode(as: Answer.self).n == 1)

            // The hostile client: a connect with a reply port nobody reads.
            let unread = ReceiveRight()
            let session = try Self.connect("com.example.x25", replies: unread, bootstrap)
            let started = ContinuousClock.now
            try Self.call(session, 1...3)
            // Meanwhile the listener answers the client that reads.
            #expect(try reader.sendSync(Ask(op: "echo", n: 2)).decode(as: Answer.self).n == 2)

            let freed = waitUntil(.seconds(5)) { !ends.withLock { $0 }.isEmpty }
            let took = ContinuousClock.now - started
            let ended = ends.withLock { $0 }
            #expect(freed != nil, "the stalled session's thread was not freed: \(ended)")
            #expect(ended.map(\.code) == [.replyTimedOut], "the session ended with \(ended)")
            if freed != nil {
                #expect(took >= .milliseconds(300) && took < .seconds(3), "the session ended after \(took)")
            }
            // Its session port is gone: the listener let the session go.
            #expect(Self.isGone(session), "the stalled session's port is still there")
            // The first reply came; the stalled one was dropped, not sent late.
            #expect(unread.status.queuedMessages == 1, "the reply port holds \(unread.status.queuedMessages)")

            #expect(try reader.sendSync(Ask(op: "echo", n: 3)).decode(as: Answer.self).n == 3)
            reader.cancel(reason: "done")
            listener.cancel()
        }

        /// X25: a reply sent after its handler returned (the message kept,
        /// answered from another thread) that waits in vain throws
        /// `replyTimedOut` within the timeout and ends the session too,
        /// though its thread was waiting for the next message.
        @Test func X25_aLateReplyThatWaitsInVainEndsTheSessionToo() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let kept = HarborLock<[XPCReceivedMessage]>([])
            let ends = HarborLock<[XPCRichError]>([])
            let listener = try XPCListener(service: "com.example.x25late", bootstrap: bootstrap,
                                           replyTimeout: .milliseconds(300)) { request in
                request.accept(incomingMessageHandler: { message in
                    kept.withLock { $0.append(message) }
                    return nil  // answered later, off the handler
                }, cancellationHandler: { error in ends.withLock { $0.append(error) } })
            }
            let unread = ReceiveRight()
            let session = try Self.connect("com.example.x25late", replies: unread, bootstrap)
            try Self.call(session, 1...2)
            #expect(waitUntil(.seconds(5)) { kept.withLock { $0.count } == 2 } != nil)
            let messages = kept.withLock { $0 }
            let answer = Answer(n: 0, uid: 0, pid: 0, count: 0)
            #expect(xpcCode { try messages[0].reply(answer) } == nil, "the first reply had room")
            let started = ContinuousClock.now
            #expect(xpcCode { try messages[1].reply(answer) } == .replyTimedOut)
            let took = ContinuousClock.now - started
            #expect(took >= .milliseconds(300) && took < .seconds(3), "the reply gave up after \(took)")
            let freed = waitUntil(.seconds(5)) { !ends.withLock { $0 }.isEmpty }
            #expect(freed != nil, "the session did not end")
            #expect(ends.withLock { $0 }.map(\.code) == [.replyTimedOut], "the session ended with \(ends.withLock { $0 })")
            #expect(Self.isGone(session), "the session's port is still there")
            listener.cancel()
        }
    }
}
