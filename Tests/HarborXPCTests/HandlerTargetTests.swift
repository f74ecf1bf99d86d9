// HarborXPC tests — handlers run where the caller chooses: a queue, a run loop, Swift concurrency (X21).
import Dispatch
import Glibc
import HarborBootstrap
import HarborRunLoop
import HarborSystem
import HarborTestSupport
import HarborXPC
import Testing

/// What a handler saw: whether it ran on its target, and in which order.
final class Observations: Sendable {
    private let state = HarborLock<(onTarget: [Bool], order: [Int], inside: Int, mostInside: Int)>(([], [], 0, 0))

    /// Records one handler's start; `onTarget` is whether it runs on its target.
    func enter(_ n: Int, onTarget: Bool) {
        state.withLock {
            $0.onTarget.append(onTarget)
            $0.order.append(n)
            $0.inside += 1
            $0.mostInside = max($0.mostInside, $0.inside)
        }
    }

    /// Records one handler's end.
    func leave() { state.withLock { $0.inside -= 1 } }

    var onTarget: [Bool] { state.withLock { $0.onTarget } }
    var order: [Int] { state.withLock { $0.order } }
    /// The most handlers that ran at once.
    var mostInside: Int { state.withLock { $0.mostInside } }
}

/// State a loop's handlers share, confined to the loop's thread: a plain
/// class, neither `Sendable` nor `@unchecked Sendable`.
final class Tally {
    var seen: [Int] = []
    var threads: Set<pthread_t> = []
}

/// The actor that owns the tally, on the loop's thread (`LoopActor`).
actor Ledger: LoopActor {
    nonisolated let loopExecutor: LoopExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { loopExecutor.asUnownedSerialExecutor() }
    let tally = Tally()

    init(loop: Loop) { loopExecutor = LoopExecutor(loop: loop) }

    func seen() -> [Int] { tally.seen }
    func threadCount() -> Int { tally.threads.count }
}

/// The order an async handler's awaits reach it in.
actor Sequencer {
    private var taken: [Int] = []
    private var inside = 0
    private(set) var mostInside = 0

    var order: [Int] { taken }

    func take(_ n: Int) async -> Int {
        inside += 1
        mostInside = max(mostInside, inside)
        try? await Task.sleep(for: .milliseconds(2))   // a suspension: another handler could run now
        taken.append(n)
        inside -= 1
        return taken.count
    }
}

extension XPCTests {
    @Suite struct HandlerTargets {
        /// X21: with a target queue, the listener's incoming-session handler,
        /// its session's message handler and cancellation handler run on it
        /// (the queue's specific value is seen), one at a time in order; a
        /// session's reply handlers and cancellation handler run on its
        /// queue, one at a time even when that queue is concurrent.
        @Test func X21_handlersRunOnTheTargetQueueOneAtATimeInOrder() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let key = DispatchSpecificKey<String>()
            let serviceQueue = DispatchQueue(label: "x21.service", attributes: .concurrent)
            serviceQueue.setSpecific(key: key, value: "service")
            let clientQueue = DispatchQueue(label: "x21.client", attributes: .concurrent)
            clientQueue.setSpecific(key: key, value: "client")
            let onQueue: @Sendable (String) -> Bool = { DispatchQueue.getSpecific(key: key) == $0 }

            let decided = Latch<Bool>()
            let messages = Observations()
            let serviceEnded = Latch<Bool>()
            let listener = try XPCListener(service: "com.example.x21q", targetQueue: serviceQueue,
                                           bootstrap: bootstrap) { request in
                decided.set(onQueue("service"))
                return request.accept(incomingMessageHandler: { message in
                    let ask = try? message.decode(as: Ask.self)
                    messages.enter(ask?.n ?? -1, onTarget: onQueue("service"))
                    defer { messages.leave() }
                    usleep(1_000)
                    return Answer(n: ask?.n ?? -1, uid: 0, pid: 0, count: 0)
                }, cancellationHandler: { _ in serviceEnded.set(onQueue("service")) })
            }
            let clientEnded = Latch<Bool>()
            let session = try XPCSession(machService: "com.example.x21q", targetQueue: clientQueue,
                                         bootstrap: bootstrap, cancellationHandler: { _ in clientEnded.set(onQueue("client")) })
            #expect(decided.wait() == true, "the incoming-session handler ran off the target queue")

            for n in 0..<10 { try session.send(Ask(op: "echo", n: n)) }
            let replies = Observations()
            let allReplied = Latch<Bool>()
            let count = HarborLock(0)
            for n in 10..<20 {
                session.send(Ask(op: "echo", n: n)) { (result: Result<Answer, any Error>) in
                    replies.enter((try? result.get().n) ?? -1, onTarget: onQueue("client"))
                    usleep(5_000)
                    replies.leave()
                    if count.withLock({ $0 += 1; return $0 }) == 10 { allReplied.set(true) }
                }
            }
            #expect(allReplied.wait() == true)
            #expect(try session.sendSync(Ask(op: "echo", n: 20)).decode(as: Answer.self).n == 20)
            #expect(messages.onTarget.count == 21 && messages.onTarget.allSatisfy { $0 },
                    "message handlers off the target queue: \(messages.onTarget)")
            #expect(Array(messages.order.prefix(10)) == Array(0..<10), "one-way messages out of order: \(messages.order)")
            #expect(messages.mostInside == 1, "a session's message handlers overlapped")
            #expect(replies.onTarget.count == 10 && replies.onTarget.allSatisfy { $0 },
                    "reply handlers off the session's queue: \(replies.onTarget)")
            #expect(replies.mostInside == 1, "a session's reply handlers overlapped on a concurrent target queue")

            session.cancel(reason: "done")
            #expect(clientEnded.wait() == true, "the session's cancellation handler ran off its queue")
            #expect(serviceEnded.wait() == true, "the listener session's cancellation handler ran off the target queue")
            listener.cancel()
        }

        /// X21: with a run loop as the target, every handler runs on the
        /// loop's thread, so the state the loop's actor owns (a plain,
        /// non-Sendable class) is mutated by the handlers with no lock and
        /// no `@unchecked Sendable`, in the order the messages came; the
        /// cancellation handler runs there too.
        @Test func X21_handlersRunOnTheLoopsThreadAndMutateLoopConfinedState() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let worker = LoopWorker(name: "x21.loop")
            defer { worker.stop() }
            let ledger = Ledger(loop: worker.loop)
            let offLoop = Latch<String>()
            let record = ledger.confined { (ledger: isolated Ledger, message: XPCReceivedMessage) in
                let n = (try? message.decode(as: Ask.self))?.n ?? -1
                ledger.tally.seen.append(n)
                ledger.tally.threads.insert(pthread_self())
                try? message.reply(Answer(n: n, uid: 0, pid: 0, count: ledger.tally.seen.count))
            }
            let ended = Latch<Bool>()
            let loop = worker.loop
            let listener = try XPCListener(service: "com.example.x21l", target: .loop(loop),
                                           bootstrap: bootstrap) { request in
                if !loop.isCurrent { offLoop.set("the incoming-session handler") }
                return request.accept(incomingMessageHandler: { message in
                    guard loop.isCurrent else {
                        offLoop.set("a message handler")
                        return nil
                    }
                    record(message)
                    return nil
                }, cancellationHandler: { _ in ended.set(loop.isCurrent) })
            }
            let session = try XPCSession(machService: "com.example.x21l", bootstrap: bootstrap)
            for n in 0..<8 { try session.send(Ask(op: "echo", n: n)) }
            let last = try session.sendSync(Ask(op: "echo", n: 8)).decode(as: Answer.self)
            #expect(offLoop.wait(.zero) == nil, "\(offLoop.wait(.zero) ?? "") ran off the loop's thread")
            #expect(last.n == 8 && last.count == 9)
            #expect(await ledger.seen() == Array(0...8), "the loop's handlers saw the messages out of order")
            #expect(await ledger.threadCount() == 1)
            session.cancel(reason: "done")
            #expect(ended.wait() == true, "the cancellation handler ran off the loop's thread")
            listener.cancel()
        }

        /// X21: an async message handler runs on Swift concurrency and may
        /// await an actor; the session still takes its messages one at a
        /// time, in order, and the handler's value is the reply.
        @Test func X21_anAsyncHandlerAwaitsAnActorOneMessageAtATime() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let sequencer = Sequencer()
            let listener = try XPCListener(service: "com.example.x21a", bootstrap: bootstrap) { request in
                request.accept { message async -> (any Encodable & Sendable)? in
                    guard let ask = try? message.decode(as: Ask.self) else { return nil }
                    let count = await sequencer.take(ask.n)
                    return Answer(n: ask.n, uid: 0, pid: 0, count: count)
                }
            }
            let session = try XPCSession(machService: "com.example.x21a", bootstrap: bootstrap)
            for n in 0..<6 { try session.send(Ask(op: "echo", n: n)) }
            let reply = try session.sendSync(Ask(op: "echo", n: 6)).decode(as: Answer.self)
            #expect(reply.n == 6 && reply.count == 7, "the async handler's reply: \(reply)")
            #expect(await sequencer.mostInside == 1, "a session's async handlers overlapped")
            #expect(await sequencer.order == Array(0...6), "the async handlers took the messages out of order")
            session.cancel(reason: "done")
            listener.cancel()
        }

        /// X21: a subscription's event handler runs on the target queue of
        /// the session that made it (the queue's specific value is seen),
        /// one event at a time, in order, and so does its last call, with
        /// the error that ended the stream.
        @Test func X21_aSubscriptionsEventHandlerRunsOnTheSessionsTargetQueue() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let key = DispatchSpecificKey<String>()
            let clientQueue = DispatchQueue(label: "x21.events", attributes: .concurrent)
            clientQueue.setSpecific(key: key, value: "client")
            let onQueue: @Sendable () -> Bool = { DispatchQueue.getSpecific(key: key) == "client" }
            let ticks = try XPCPublisher<Tick>(policy: .wait(keep: 100, timeout: .seconds(10)))
            let listener = try publishing("com.example.x21s", ticks, bootstrap: bootstrap)
            let session = try XPCSession(machService: "com.example.x21s", targetQueue: clientQueue, bootstrap: bootstrap)
            let subscription = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            let events = Observations()
            let ended = Latch<(XPCRichError.Code, Bool)>()
            try subscription.setEventHandler { result in
                switch result {
                case .success(let tick):
                    events.enter(tick.n, onTarget: onQueue())
                    usleep(2_000)
                    events.leave()
                case .failure(let error):
                    ended.set((error.code, onQueue()))
                }
            }
            for n in 0..<10 { ticks.publish(Tick(n: n)) }
            #expect(waitUntil(.seconds(10)) { events.order.count == 10 } != nil, "events: \(events.order)")
            #expect(events.order == Array(0..<10), "events out of order: \(events.order)")
            #expect(events.onTarget.count == 10 && events.onTarget.allSatisfy { $0 },
                    "event handlers off the session's queue: \(events.onTarget)")
            #expect(events.mostInside == 1, "a subscription's event handlers overlapped on a concurrent target queue")
            ticks.cancel(reason: "done")
            let end = ended.wait()
            #expect(end?.0 == .connectionInterrupted && end?.1 == true, "the stream's end: \(String(describing: end))")
            session.cancel(reason: "done")
            listener.cancel()
        }
    }
}
