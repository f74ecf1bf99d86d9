// HarborXPC tests — a subscriber's events take no thread per event or per subscription (X27).
import Dispatch
import Glibc
import HarborPorts
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

/// The threads of this process now (`/proc/self/task`).
func threadCount() -> Int {
    (FileSystem.entries(of: "/proc/self/task") ?? []).count
}

/// The id a new thread gets now: thread ids are handed out in increasing
/// order, so two of these bound how many threads were made in between (in
/// any process of the pid namespace: an upper bound for this one).
func nextThreadID() -> Int {
    let id = Latch<Int>()
    SystemThread.start { id.set(Int(SystemThread.kernelID)) }.join()
    return id.wait() ?? 0
}

extension XPCTests {
    @Suite struct SubscriptionThreads {
        /// X27: taking N events with `for try await` makes no thread per
        /// event: fewer than N/4 thread ids are handed out meanwhile (the
        /// ids of threads made by any process bound the count from above).
        @Test func X27_eventsTakenWithForTryAwaitMakeNoThreadPerEvent() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>(policy: .wait(keep: 4_096, timeout: .seconds(30)))
            let listener = try publishing("com.example.x27a", ticks, bootstrap: bootstrap)
            let session = try XPCSession(machService: "com.example.x27a", bootstrap: bootstrap)
            let subscription = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, queueLimit: 64)
            let count = 2_000
            let before = nextThreadID()
            let publisher = SystemThread.start {
                for n in 0..<count { ticks.publish(Tick(n: n)) }
            }
            var seen: [Int] = []
            for try await tick in subscription {
                seen.append(tick.n)
                if seen.count == count { break }
            }
            let made = nextThreadID() - before
            publisher.join()
            #expect(seen == Array(0..<count), "events out of order or missing")
            #expect(made < count / 4, "\(made) threads were made while \(count) events were taken")
            subscription.cancel()
            session.cancel(reason: "done")
            listener.cancel()
        }

        /// X27: subscriptions with a consumer waiting (a pending `for try
        /// await`, or an event handler) need no thread each: 32 of them add
        /// at most a few threads to the process, and each still gets
        /// events (the publisher, with its thread per subscriber, is
        /// another process). The handlers run on one serial target queue,
        /// so Dispatch's pool, which starts a thread for each handler queue
        /// busy at once under a default target, does not blur the count.
        @Test func X27_waitingSubscriptionsShareOneReceivingThread() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let publisher = harbord.publisher("com.example.x27b")  // a tick every 50 ms
            defer { kill(publisher.pid, SIGKILL) }
            let handlerQueue = DispatchQueue(label: "x27b handlers")
            let session = try XPCSession(machService: "com.example.x27b", targetQueue: handlerQueue, bootstrap: bootstrap)
            let handled = HarborLock<Set<Int>>([])
            var subscriptions: [XPCSubscription<Tick>] = []
            // One of each first, so the shared machinery exists before counting.
            for _ in 0..<2 { subscriptions.append(try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)) }
            let warm = subscriptions
            try warm[1].setEventHandler { if case .success = $0 { handled.withLock { _ = $0.insert(-1) } } }
            let warmTask = Task { for try await _ in warm[0] { break } }
            _ = try await warmTask.value
            #expect(waitUntil { handled.withLock { $0.contains(-1) } } != nil, "the warm-up handler got no event")
            warm[0].cancel()
            warm[1].cancel()
            usleep(100_000)  // threads of the warm-up end
            let before = threadCount()
            let each = 16
            var tasks: [Task<Int?, any Error>] = []
            for index in 0..<each {
                let awaited = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, queueLimit: 1)
                subscriptions.append(awaited)
                tasks.append(Task { for try await tick in awaited { return tick.n }; return nil })
                let handling = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, queueLimit: 1)
                subscriptions.append(handling)
                try handling.setEventHandler { if case .success = $0 { handled.withLock { _ = $0.insert(index) } } }
            }
            let during = threadCount()
            // The receiving thread, the cooperative pool's (one a CPU), and
            // the Dispatch threads of the two serial queues (the handlers'
            // target and the session's sends). A thread per subscription
            // would add 32 (22 or more were seen before the shared receiver;
            // with a queue per handler, the count reached 13 under
            // AddressSanitizer).
            #expect(during - before <= 8, "\(2 * each) subscriptions with a consumer added \(during - before) threads")
            for task in tasks { #expect(try await task.value != nil) }
            #expect(waitUntil { handled.withLock { $0.count } == 1 + each } != nil,
                    "handlers that got an event: \(handled.withLock { $0.count - 1 }) of \(each)")
            for subscription in subscriptions { subscription.cancel() }
            session.cancel(reason: "done")
        }

        /// X27: an event handler that does not return holds up only its own
        /// subscription: another subscription of the same process (default
        /// target) gets every event meanwhile, and the blocked one takes its
        /// next event once its handler returns.
        @Test func X27_aBlockedHandlerDoesNotHoldUpAnotherSubscription() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>(policy: .wait(keep: 100, timeout: .seconds(10)))
            let listener = try publishing("com.example.x27c", ticks, bootstrap: bootstrap)
            let session = try XPCSession(machService: "com.example.x27c", bootstrap: bootstrap)
            let stuck = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            let free = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            let release = Latch<Bool>()
            let stuckSeen = HarborLock<[Int]>([])
            let freeSeen = HarborLock<[Int]>([])
            try stuck.setEventHandler { result in
                guard case .success(let tick) = result else { return }
                stuckSeen.withLock { $0.append(tick.n) }
                if tick.n == 0 { _ = release.wait(.seconds(20)) }
            }
            try free.setEventHandler { result in
                guard case .success(let tick) = result else { return }
                freeSeen.withLock { $0.append(tick.n) }
            }
            for n in 0..<10 { ticks.publish(Tick(n: n)) }
            #expect(waitUntil(.seconds(5)) { !stuckSeen.withLock { $0 }.isEmpty } != nil, "the first event was not handled")
            #expect(waitUntil(.seconds(5)) { freeSeen.withLock { $0 } == Array(0..<10) } != nil,
                    "a blocked handler held up another subscription: \(freeSeen.withLock { $0 })")
            #expect(stuckSeen.withLock { $0 } == [0], "the blocked subscription took an event before its handler returned")
            release.set(true)
            #expect(waitUntil(.seconds(5)) { stuckSeen.withLock { $0 } == Array(0..<10) } != nil,
                    "the released subscription: \(stuckSeen.withLock { $0 })")
            stuck.cancel()
            free.cancel()
            session.cancel(reason: "done")
            listener.cancel()
        }
    }
}
