// HarborXPC tests — calls by number over the session's one reply port (X15, X16).
import Glibc
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

extension XPCTests {
    @Suite struct NumberedCalls {
        /// A listener written by hand: the name checked in, one session
        /// accepted on `sessionPort`; what the connect carried as right 0.
        struct HandListener {
            let listening: Listening
            let sessionPort = Listening(ReceiveRight())
            let connectRights: Latch<[SendRight]>

            init(_ name: String, _ bootstrap: BootstrapClient) throws {
                listening = Listening(try bootstrap.checkIn(name))
                connectRights = Latch()
            }

            /// Accepts one connect on a thread of its own.
            func acceptOne() -> SystemThread {
                let listening = listening, sessionPort = sessionPort, rights = connectRights
                return SystemThread.start {
                    guard var connect = try? listening.port.receive(timeout: .seconds(10)),
                          connect.id == XPCWire.connect else { return }
                    var carried: [SendRight] = []
                    if connect.carriedRights == [.send], let right = try? connect.takeSendRight(at: 0) {
                        carried.append(right)
                    }
                    var accepted = Message(id: XPCWire.accepted)
                    accepted.attach(sessionPort.port.makeSendRight())
                    try? connect.reply(accepted)
                    rights.set(carried)
                }
            }

            /// The next call on the session: its number and its `Ask`.
            func nextCall() throws -> (number: UInt64, ask: Ask, hadReplyRight: Bool) {
                var call = try sessionPort.port.receive(timeout: .seconds(10))
                #expect(call.id == XPCWire.call)
                let hadReplyRight = call.hasReplyRight
                let taken = XPCWire.takeNumber(from: &call)
                let number = try #require(taken)
                return (number, try MessageDecoder().decode(Ask.self, from: &call), hadReplyRight)
            }
        }

        static func reply(_ n: Int, number: UInt64, id: Int32 = XPCWire.reply) throws -> Message {
            var reply = try MessageEncoder().encode(Answer(n: n, uid: 0, pid: 0, count: 0), id: id)
            XPCWire.append(number, to: &reply)
            return reply
        }

        /// X15: a session hands the listener a send right to its one reply
        /// port at connect; each call then carries a number and no reply
        /// right, and calls from several threads at once each get their own
        /// reply, whatever order the replies come in.
        @Test func X15_callsShareTheSessionsReplyPortAndAreMatchedByNumber() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let service = try HandListener("com.example.x15", bootstrap)
            let acceptor = service.acceptOne()
            let session = try XPCSession(machService: "com.example.x15", bootstrap: bootstrap)
            acceptor.join()
            let rights = try #require(service.connectRights.wait())
            try #require(rights.count == 1, "the connect carries one send right, to the session's reply port")
            let replies = rights[0]

            let answers = (0..<3).map { _ in Latch<Int>() }
            let callers = (0..<3).map { index in
                SystemThread.start {
                    let answer = try? session.sendSync(Ask(op: "echo", n: index)).decode(as: Answer.self)
                    answers[index].set(answer?.n ?? -1)
                }
            }
            var calls: [(number: UInt64, n: Int)] = []
            for _ in 0..<3 {
                let call = try service.nextCall()
                #expect(!call.hadReplyRight, "a numbered call carries no reply right")
                calls.append((call.number, call.ask.n))
            }
            #expect(Set(calls.map(\.number)).count == 3, "each call has its own number")
            for call in calls.sorted(by: { $0.number > $1.number }) {   // the last call first
                try replies.send(Self.reply(call.n, number: call.number))
            }
            for index in 0..<3 { #expect(answers[index].wait() == index) }
            for caller in callers { caller.join() }

            // Later calls keep the same reply port, with new numbers.
            let later = Latch<Int>()
            let caller = SystemThread.start {
                later.set((try? session.sendSync(Ask(op: "echo", n: 40)).decode(as: Answer.self).n) ?? -1)
            }
            let call = try service.nextCall()
            #expect(call.number > calls.map(\.number).max() ?? 0, "numbers are never reused")
            try replies.send(Self.reply(40, number: call.number))
            #expect(later.wait() == 40)
            caller.join()
            session.cancel(reason: "done")
        }

        /// X16: what comes to the reply port that is not the answer to a
        /// waiting call is dropped, never a trap nor another call's answer:
        /// an unknown number, a body too short for one, another message id,
        /// a failure with a forged number, and a duplicate of an answer
        /// already given (which then cannot answer the next call).
        @Test func X16_aForgedUnknownOrDuplicateNumberAnswersNoCall() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let service = try HandListener("com.example.x16", bootstrap)
            let acceptor = service.acceptOne()
            let session = try XPCSession(machService: "com.example.x16", bootstrap: bootstrap)
            acceptor.join()
            let replies = try #require(service.connectRights.wait()?.first)

            let first = Latch<Int>()
            var caller = SystemThread.start {
                first.set((try? session.sendSync(Ask(op: "echo", n: 5)).decode(as: Answer.self).n) ?? -1)
            }
            let call = try service.nextCall()
            try replies.send(Self.reply(-1, number: call.number + 1_000))                    // unknown
            try replies.send(Message(id: XPCWire.reply, body: [1, 2, 3]))                    // no number
            try replies.send(Self.reply(-1, number: call.number, id: 0x1234))                 // another id
            var forged = Message(id: XPCWire.failure, text: "noReply\tforged")
            XPCWire.append(call.number &+ 7, to: &forged)
            try replies.send(forged)                                                          // a forged failure
            try replies.send(Self.reply(5, number: call.number))                              // the answer
            try replies.send(Self.reply(-2, number: call.number))                             // a duplicate
            #expect(first.wait() == 5)
            caller.join()

            let second = Latch<Int>()
            caller = SystemThread.start {
                second.set((try? session.sendSync(Ask(op: "echo", n: 6)).decode(as: Answer.self).n) ?? -1)
            }
            let next = try service.nextCall()
            #expect(next.number != call.number)
            try replies.send(Self.reply(-3, number: call.number))                             // stale
            try replies.send(Self.reply(6, number: next.number))
            #expect(second.wait() == 6, "the duplicate and the stale answer answered no other call")
            caller.join()
            session.cancel(reason: "done")
        }
    }
}
