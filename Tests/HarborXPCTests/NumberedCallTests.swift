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

        /// X15: calls no thread waits for (`send(_:replyHandler:)`, the
        /// async `send`) take no thread each: 32 of each pending at once
        /// leave the process with the session's reply thread, its send
        /// queue's thread and at most the concurrency pool's threads more
        /// than before (a thread per call was 64), and each gets its own
        /// reply, answered last first.
        @Test func X15_handlerAndAsyncCallsTakeNoThreadEach() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let service = try HandListener("com.example.x15a", bootstrap)
            let acceptor = service.acceptOne()
            let session = try XPCSession(machService: "com.example.x15a", bootstrap: bootstrap)
            acceptor.join()
            let replies = try #require(service.connectRights.wait()?.first)
            let before = threadsOfThisProcess()
            let handled = (0..<32).map { _ in Latch<Int>() }
            for index in 0..<32 {
                session.send(Ask(op: "echo", n: index)) { (result: Result<Answer, any Error>) in
                    handled[index].set((try? result.get().n) ?? -1)
                }
            }
            let tasks = (0..<32).map { index in
                Task { () throws -> Int in
                    let answer: Answer = try await session.send(Ask(op: "echo", n: 100 + index))
                    return answer.n
                }
            }
            var calls: [(number: UInt64, n: Int)] = []
            for _ in 0..<64 {
                let call = try service.nextCall()
                calls.append((call.number, call.ask.n))
            }
            let during = threadsOfThisProcess()
            // The session's reply thread, its send queue's dispatch thread
            // (most calls find the 5-message queue full), the pool's threads.
            let allowed = 2 + Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
            #expect(during - before <= allowed, "\(during - before) more threads for 64 pending calls")
            for call in calls.sorted(by: { $0.number > $1.number }) {
                try replies.send(Self.reply(call.n, number: call.number))
            }
            for index in 0..<32 { #expect(handled[index].wait() == index) }
            for (index, task) in tasks.enumerated() { #expect(try await task.value == 100 + index) }
            session.cancel(reason: "done")
        }

        /// X15: a handler call finds the service's queue full and does not
        /// wait: it is sent when there is room, and the calls made after it
        /// go behind it, in order.
        @Test func X15_aHandlerCallToAFullQueueNeitherBlocksNorOvertakes() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let service = try HandListener("com.example.x15f", bootstrap)
            try service.sessionPort.port.setQueueLimit(2)
            let acceptor = service.acceptOne()
            let session = try XPCSession(machService: "com.example.x15f", bootstrap: bootstrap)
            acceptor.join()
            let replies = try #require(service.connectRights.wait()?.first)
            let handled = (0..<10).map { _ in Latch<Int>() }
            let made = Latch<Bool>()
            let caller = SystemThread.start {
                for index in 0..<10 {
                    session.send(Ask(op: "echo", n: index)) { (result: Result<Answer, any Error>) in
                        handled[index].set((try? result.get().n) ?? -1)
                    }
                }
                made.set(true)
            }
            #expect(made.wait(.seconds(5)) == true, "a call waited for room in the service's queue")
            var order: [Int] = []
            for _ in 0..<10 {
                let call = try service.nextCall()
                order.append(call.ask.n)
                try replies.send(Self.reply(call.ask.n, number: call.number))
            }
            #expect(order == Array(0..<10), "a call overtook one waiting for room")
            for index in 0..<10 { #expect(handled[index].wait() == index) }
            caller.join()
            session.cancel(reason: "done")
        }

        /// X05 with calls no thread waits for: cancelling the session fails
        /// each pending handler and async call with `connectionInvalid`.
        @Test func X05_cancellingFailsPendingHandlerAndAsyncCalls() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let service = try HandListener("com.example.x05a", bootstrap)
            let acceptor = service.acceptOne()
            let session = try XPCSession(machService: "com.example.x05a", bootstrap: bootstrap)
            acceptor.join()
            let handled = Latch<String>()
            session.send(Ask(op: "echo", n: 1)) { (result: Result<Answer, any Error>) in
                switch result {
                case .failure(let error as XPCRichError): handled.set("\(error.code)")
                case .failure(let error): handled.set("\(error)")
                case .success: handled.set("answered")
                }
            }
            let task = Task { () -> XPCRichError.Code? in
                do {
                    let _: Answer = try await session.send(Ask(op: "echo", n: 2))
                    return nil
                } catch let error as XPCRichError {
                    return error.code
                }
            }
            _ = try service.nextCall()
            _ = try service.nextCall()
            session.cancel(reason: "done")
            #expect(handled.wait() == "\(XPCRichError.Code.connectionInvalid)")
            #expect(try await task.value == .connectionInvalid)
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

/// How many threads this process has (`/proc/self/task`).
private func threadsOfThisProcess() -> Int {
    guard let directory = opendir("/proc/self/task") else { return -1 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
        if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
    }
    return count
}
