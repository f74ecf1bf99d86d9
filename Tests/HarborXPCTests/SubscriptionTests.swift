// HarborXPC tests — subscriptions: a publisher's stream, each subscriber on its own port (X09–X13, X24, X26).
import Glibc
import HarborBootstrap
import HarborCoding
import HarborPorts
import HarborSystem
import HarborTestSupport
@testable import HarborXPC
import Testing

/// One event (the probe's `Tick`).
struct Tick: Codable, Sendable {
    var n: Int
}

extension PrivateHarbord {
    /// harbor-xpc-probe `subscribe NAME LAST LIMIT`, once it says it subscribed.
    func subscriber(_ name: String, last: Int, limit: Int = 16, asNobody: Bool = false) -> Child {
        let arguments = ["subscribe", name, "\(last)", "\(limit)"]
        let probe = asNobody
            ? Child(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     reachableCopy(of: "harbor-xpc-probe")] + arguments, environment: clientEnvironment)
            : Child([builtExecutable("harbor-xpc-probe")] + arguments, environment: clientEnvironment)
        #expect(probe.waitForStdout("subscribed"), "the subscriber did not subscribe: \(probe.stdoutSoFar)")
        return probe
    }

    /// harbor-xpc-probe `publish NAME` (a Tick every 50 ms), once it is ready.
    func publisher(_ name: String) -> Child {
        let probe = Child([builtExecutable("harbor-xpc-probe"), "publish", name], environment: clientEnvironment)
        #expect(probe.waitForStdout("ready \(name)"), "the probe publisher did not start")
        return probe
    }
}

/// A listener in this process that hands every subscription request to `publisher`.
func publishing(_ name: String, _ publisher: XPCPublisher<Tick>, bootstrap: BootstrapClient) throws -> XPCListener {
    try XPCListener(service: name, bootstrap: bootstrap) { request in
        request.accept { message in
            if message.isSubscriptionRequest { try? publisher.subscribe(message) }
            return nil
        }
    }
}

/// The event numbers a subscriber probe printed, in order.
func events(_ output: String) -> [Int] {
    output.split(separator: "\n").compactMap { $0.hasPrefix("event ") ? Int($0.dropFirst(6)) : nil }
}

/// Waits until `condition` holds, or `limit` passes; how long it took, or nil.
func waitUntil(_ limit: Duration = .seconds(5), _ condition: () -> Bool) -> Duration? {
    let start = ContinuousClock.now
    while ContinuousClock.now - start < limit {
        if condition() { return ContinuousClock.now - start }
        usleep(1_000)
    }
    return nil
}

extension XPCTests {
    @Suite struct Subscriptions {
        /// X09: every subscriber, in this process or another, gets every
        /// event in the order published, each on its own port.
        @Test func X09_eventsArriveInOrderToEverySubscriber() async throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>(policy: .wait(keep: 1000, timeout: .seconds(20)))
            let listener = try publishing("com.example.x09", ticks, bootstrap: bootstrap)
            let first = harbord.subscriber("com.example.x09", last: 99)
            let second = harbord.subscriber("com.example.x09", last: 99)
            let session = try XPCSession(machService: "com.example.x09", bootstrap: bootstrap)
            let here = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            #expect(ticks.subscriberCount == 3)
            for n in 0..<100 { ticks.publish(Tick(n: n)) }
            let seen = HarborLock<[Int]>([])
            let reader = Task {
                for try await tick in here { seen.withLock { $0.append(tick.n) } }
            }
            #expect(waitUntil(.seconds(10)) { seen.withLock { $0.count } >= 100 } != nil)
            reader.cancel()  // cancels the subscription: the loop ends
            #expect(try await reader.value == ())
            #expect(seen.withLock { $0 } == Array(0..<100))
            #expect(first.waitForStdout("done") && second.waitForStdout("done"))
            #expect(events(first.stdoutSoFar) == Array(0..<100))
            #expect(events(second.stdoutSoFar) == Array(0..<100))
            session.cancel(reason: "done")
            listener.cancel()
        }

        /// Publishes 0..<count, one a millisecond, with one subscriber stopped
        /// (SIGSTOP) and one running; returns both outputs and the longest
        /// publish call.
        static func slowSubscriber(_ policy: XPCStreamPolicy, name: String, count: Int)
            throws -> (slow: [Int], fast: [Int], longestPublish: Duration, fastDoneWhileStopped: Bool) {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>(policy: policy)
            let listener = try publishing(name, ticks, bootstrap: bootstrap)
            defer { listener.cancel() }
            let slow = harbord.subscriber(name, last: count - 1, limit: 4)
            let fast = harbord.subscriber(name, last: count - 1, limit: 1024)
            kill(slow.pid, SIGSTOP)
            var longest: Duration = .zero
            for n in 0..<count {
                let start = ContinuousClock.now
                ticks.publish(Tick(n: n))
                longest = max(longest, ContinuousClock.now - start)
                usleep(1_000)
            }
            let fastDone = fast.waitForStdout("done")
            kill(slow.pid, SIGCONT)
            #expect(slow.waitForStdout("done"), "the stopped subscriber never got the last event: \(slow.stdoutSoFar)")
            return (events(slow.stdoutSoFar), events(fast.stdoutSoFar), longest, fastDone)
        }

        /// X10: with a drop policy, a stopped subscriber loses its own events
        /// only (the oldest, keeping the latest) while the other gets every
        /// one, and publishing never waits.
        @Test func X10_aStoppedSubscriberLosesOnlyItsOwnEventsUnderADropPolicy() throws {
            // A backlog of 256 lets the running subscriber be descheduled for
            // a quarter second (a loaded machine) without losing anything.
            let run = try Self.slowSubscriber(.dropOldest(keep: 256), name: "com.example.x10a", count: 600)
            #expect(run.fastDoneWhileStopped, "the running subscriber waited for the stopped one")
            #expect(run.fast == Array(0..<600), "the running subscriber lost events")
            #expect(run.slow.count < 600 && run.slow.count >= 256, "the stopped one got \(run.slow.count)")
            #expect(run.slow == run.slow.sorted() && Set(run.slow).count == run.slow.count, "in order, no repeats")
            #expect(Array(run.slow.suffix(256)) == Array(344..<600), "drop-oldest keeps the latest: \(run.slow)")
            #expect(run.longestPublish < .milliseconds(50), "a publish waited \(run.longestPublish)")
        }

        /// X10: with the wait policy, only the stopped subscriber's stream
        /// waits: the other gets every event meanwhile, publishing never
        /// waits, and the stopped one gets every event, in order, once it runs.
        @Test func X10_underTheWaitPolicyOnlyTheStoppedSubscribersStreamWaits() throws {
            let run = try Self.slowSubscriber(.wait(keep: 1000, timeout: .seconds(30)), name: "com.example.x10b", count: 200)
            #expect(run.fastDoneWhileStopped, "the running subscriber waited for the stopped one")
            #expect(run.fast == Array(0..<200))
            #expect(run.slow == Array(0..<200), "the stopped subscriber lost events: \(run.slow.count)")
            #expect(run.longestPublish < .milliseconds(50), "a publish waited \(run.longestPublish)")
        }

        /// X10: under the wait policy, a subscriber that falls more than its
        /// backlog behind is ended (within the policy's timeout) and its share
        /// freed, while the other is served; once it runs it gets what its
        /// port held, in order, then a typed end with the reason (sent on its
        /// send-once right, which its full port takes).
        @Test func X10_underTheWaitPolicyASubscriberTooFarBehindIsEnded() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>(policy: .wait(keep: 8, timeout: .milliseconds(500)))
            let listener = try publishing("com.example.x10c", ticks, bootstrap: bootstrap)
            let slow = harbord.subscriber("com.example.x10c", last: 49, limit: 4)
            let fast = harbord.subscriber("com.example.x10c", last: 49, limit: 1024)
            kill(slow.pid, SIGSTOP)
            for n in 0..<50 {
                ticks.publish(Tick(n: n))
                usleep(1_000)
            }
            #expect(fast.waitForStdout("done"))
            #expect(events(fast.stdoutSoFar) == Array(0..<50))
            let ended = waitUntil(.seconds(5)) { ticks.subscriberCount == 0 }
            #expect(ended != nil, "the subscriber too far behind was not ended: \(ticks.subscriberCount) left")
            kill(slow.pid, SIGCONT)
            #expect(slow.waitForStdout("ended"), "the ended stream did not end: \(slow.stdoutSoFar)")
            let got = events(slow.stdoutSoFar)
            #expect(!got.isEmpty && got == Array(0..<got.count), "in order from the first: \(got)")
            #expect(slow.stdoutSoFar.contains("ended connectionInvalid the subscriber fell 8 events behind"),
                    "the end reaches even a full port, typed: \(slow.stdoutSoFar)")
            listener.cancel()
        }

        /// X11: a subscriber killed with SIGKILL ends its subscription at once,
        /// with nothing published (a dead-name notification, never polling):
        /// the count drops and the descriptors it cost are freed.
        @Test func X11_aKilledSubscribersSubscriptionEndsAndItsDescriptorsGo() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>()
            let listener = try publishing("com.example.x11", ticks, bootstrap: bootstrap)
            // One session and subscription first, so every lazily made
            // descriptor of this process is made before the count.
            let warm = harbord.subscriber("com.example.x11", last: 0)
            ticks.publish(Tick(n: 0))
            #expect(warm.waitForStdout("done"))
            #expect(waitUntil { ticks.subscriberCount == 0 } != nil)
            usleep(100_000)
            let before = openDescriptorCount()

            var subscriber: Child? = harbord.subscriber("com.example.x11", last: 1_000)
            #expect(ticks.subscriberCount == 1)
            let during = openDescriptorCount()
            kill(subscriber!.pid, SIGKILL)
            let took = waitUntil { ticks.subscriberCount == 0 }
            #expect(took != nil && took! < .seconds(1), "the subscription outlived its subscriber: \(String(describing: took))")
            subscriber = nil  // its pidfd and output pipes here go too
            let freed = waitUntil { openDescriptorCount() <= before }
            #expect(freed != nil, "descriptors: \(before) before, \(during) subscribed, \(openDescriptorCount()) after")

            // Released in this process: the same.
            let session = try XPCSession(machService: "com.example.x11", bootstrap: bootstrap)
            var here: XPCSubscription<Tick>? = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            #expect(ticks.subscriberCount == 1 && here != nil)
            here = nil
            #expect(waitUntil { ticks.subscriberCount == 0 } != nil, "a released subscription stayed")
            session.cancel(reason: "done")
            listener.cancel()
        }

        /// X12: the publisher's death (SIGKILL) ends the subscriber's stream
        /// with connectionInterrupted at once, after the events queued before;
        /// a publisher's cancel ends it, after the events published before,
        /// with connectionInterrupted and the reason.
        @Test func X12_thePublishersDeathEndsTheStreamWithATypedError() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let service = harbord.publisher("com.example.x12")
            let session = try XPCSession(machService: "com.example.x12", bootstrap: bootstrap)
            let ticks = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            let a = try ticks.next().n, b = try ticks.next().n
            #expect(b == a + 1)
            let ended = Latch<(XPCRichError, Duration)>()
            let killed = HarborLock<ContinuousClock.Instant?>(nil)
            try ticks.setEventHandler { result in
                if case .failure(let error) = result {
                    let at = killed.withLock { $0 } ?? .now
                    ended.set((error, ContinuousClock.now - at))
                }
            }
            usleep(100_000)
            killed.withLock { $0 = .now }
            kill(service.pid, SIGKILL)
            let end = ended.wait()
            #expect(end?.0.code == .connectionInterrupted, "\(String(describing: end))")
            #expect(end.map { $0.1 < .seconds(1) } == true, "the stream took \(String(describing: end?.1)) to end")
            if end != nil {
                #expect(xpcCode { _ = try ticks.next() } == .connectionInterrupted, "the end stays")
            }

            let here = try XPCPublisher<Tick>()
            let listener = try publishing("com.example.x12b", here, bootstrap: bootstrap)
            let other = try XPCSession(machService: "com.example.x12b", bootstrap: bootstrap)
            let stream = try other.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            for n in 0..<10 { here.publish(Tick(n: n)) }
            here.cancel(reason: "closing")
            for n in 0..<10 { #expect(try stream.next().n == n, "what was published before the end comes first") }
            do {
                _ = try stream.next()
                Issue.record("the cancelled stream went on")
            } catch {
                #expect(error.code == .connectionInterrupted && error.reason.hasSuffix("closing"), "\(error)")
            }
            other.cancel(reason: "done")
            listener.cancel()
        }

        /// X13: whoever asks pays: a uid past its share of a publisher's
        /// subscriptions is refused with a typed error while another uid is
        /// served, and a subscription let go makes room again.
        @Test(.requiresRoot("to subscribe as nobody"))
        func X13_aUidPastItsSubscriptionShareIsRefusedWhileAnotherIsServed() throws {
            let harbord = PrivateHarbord(policy: "shared com.example.x13 owner=0\n")
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>(subscriptionsPerUid: 2)
            let listener = try publishing("com.example.x13", ticks, bootstrap: bootstrap)
            let session = try XPCSession(machService: "com.example.x13", bootstrap: bootstrap)
            var held = [try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self),
                        try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)]
            do {
                _ = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
                Issue.record("a third subscription of one uid was taken")
            } catch {
                #expect(error.code == .subscriptionRejected && error.reason.contains("uid \(getuid())"), "\(error)")
            }
            let nobody = harbord.subscriber("com.example.x13", last: 3, asNobody: true)
            #expect(ticks.subscriberCount == 3)
            for n in 0..<4 { ticks.publish(Tick(n: n)) }
            #expect(nobody.waitForStdout("done"), "nobody was not served: \(nobody.stdoutSoFar)")
            #expect(events(nobody.stdoutSoFar) == [0, 1, 2, 3])
            #expect(waitUntil { ticks.subscriberCount == 2 } != nil, "nobody's probe exited: its subscription ends")
            held.removeLast()
            #expect(waitUntil { ticks.subscriberCount == 1 } != nil)
            #expect((try? session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)) != nil, "no room again")
            _ = held
            session.cancel(reason: "done")
            listener.cancel()
        }

        /// X26: a subscription made with `resubscribeWithin` outlives its
        /// publisher: the publisher's process is killed (SIGKILL), the
        /// subscriber keeps asking while the name has no instance, and once
        /// a new publisher checks the name in, the stream goes on with its
        /// events (numbered from 0 again), counted in `resubscriptions`.
        @Test func X26_aResubscribingSubscriptionOutlivesItsPublisher() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let first = harbord.publisher("com.example.x26")
            let session = try XPCSession(machService: "com.example.x26", bootstrap: bootstrap)
            let ticks = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, resubscribeWithin: .seconds(20))
            var last = try ticks.next().n
            last = try ticks.next().n
            kill(first.pid, SIGKILL)
            // The name has no instance for a while: the subscriber's tries
            // find none (or the dead one) and pause.
            usleep(300_000)
            #expect(ticks.resubscriptions == 0)
            let second = harbord.publisher("com.example.x26")
            var seen: [Int] = []
            var restarted = false
            while seen.count < 100 && !restarted {
                let n = try ticks.next().n
                seen.append(n)
                if n < last { restarted = true } else { last = n }
            }
            #expect(restarted, "no event of the new publisher came: \(seen)")
            #expect(ticks.resubscriptions == 1)
            let after = try ticks.next().n
            #expect(after == seen.last! + 1, "the new publisher's events in order")
            ticks.cancel()
            session.cancel(reason: "done")
            _ = second
        }

        /// X26: when no instance takes the subscription again within the
        /// window, the stream ends with `connectionInterrupted`, saying so,
        /// after the window; `cancel()` during the retries ends it at once
        /// with `connectionInvalid`; a request carrying a right cannot
        /// resubscribe (it is refused up front, typed).
        @Test func X26_withoutANewInstanceTheStreamEndsAfterTheWindowTyped() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let publisher = harbord.publisher("com.example.x26b")
            let session = try XPCSession(machService: "com.example.x26b", bootstrap: bootstrap)
            let ticks = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, resubscribeWithin: .milliseconds(400))
            _ = try ticks.next()
            kill(publisher.pid, SIGKILL)
            let killed = ContinuousClock.now
            do {
                while true { _ = try ticks.next() }
            } catch {
                let took = ContinuousClock.now - killed
                #expect(error.code == .connectionInterrupted && error.reason.contains("no instance took the subscription"),
                        "\(error)")
                #expect(took >= .milliseconds(400) && took < .seconds(5), "ended after \(took)")
            }
            #expect(ticks.resubscriptions == 0)

            let again = harbord.publisher("com.example.x26b")
            let cancelled = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, resubscribeWithin: .seconds(60))
            _ = try cancelled.next()
            kill(again.pid, SIGKILL)
            let ended = Latch<(XPCRichError, ContinuousClock.Instant)>()
            try cancelled.setEventHandler { result in
                if case .failure(let error) = result { ended.set((error, .now)) }
            }
            usleep(300_000)  // the subscription is retrying: no instance
            let cancelledAt = ContinuousClock.now
            cancelled.cancel()
            let end = ended.wait()
            #expect(end?.0.code == .connectionInvalid, "\(String(describing: end))")
            #expect(end.map { $0.1 - cancelledAt < .seconds(1) } == true, "cancel took long to end the retries")

            let right = ReceiveRight()
            struct WithRight: Codable { var events: SendRight }
            #expect(xpcCode { _ = try session.subscribe(WithRight(events: right.makeSendRight()), as: Tick.self,
                                                       resubscribeWithin: .seconds(1)) } == .codingFailed)
            session.cancel(reason: "done")
        }

        /// X24: `cancel()` ends the subscription at the publisher at once,
        /// while the subscriber still holds the subscription object: the
        /// publisher's count drops within a bounded time (its stream, thread
        /// and right go), events published after reach nobody, and the
        /// subscription throws `connectionInvalid`; the same with a `next()`
        /// waiting on another thread when it is cancelled (woken, then the
        /// port goes).
        @Test func X24_cancelEndsTheSubscriptionAtThePublisherWhileTheObjectLives() throws {
            let harbord = PrivateHarbord()
            let bootstrap = try harbord.client()
            let ticks = try XPCPublisher<Tick>()
            let listener = try publishing("com.example.x24", ticks, bootstrap: bootstrap)
            let session = try XPCSession(machService: "com.example.x24", bootstrap: bootstrap)

            // Nobody waiting in next().
            let idle = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            #expect(ticks.subscriberCount == 1)
            ticks.publish(Tick(n: 0))
            #expect(try idle.next().n == 0)
            idle.cancel()
            let idleGone = waitUntil(.seconds(2)) { ticks.subscriberCount == 0 }
            #expect(idleGone != nil, "the publisher still counts a cancelled subscription that is held")
            ticks.publish(Tick(n: 1))
            #expect(ticks.subscriberCount == 0)
            #expect(xpcCode { _ = try idle.next() } == .connectionInvalid)

            // A next() waiting on another thread.
            let waiting = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self)
            #expect(ticks.subscriberCount == 1)
            let woken = Latch<XPCRichError.Code>()
            let reader = SystemThread.start {
                woken.set(xpcCode { _ = try waiting.next() } ?? .noReply)
            }
            usleep(50_000)  // let it wait
            waiting.cancel()
            #expect(woken.wait(.seconds(2)) == .connectionInvalid, "the waiting next() was not woken")
            reader.join()
            let waitingGone = waitUntil(.seconds(2)) { ticks.subscriberCount == 0 }
            #expect(waitingGone != nil, "the publisher still counts a cancelled subscription that is held")
            ticks.publish(Tick(n: 2))
            #expect(xpcCode { _ = try waiting.next() } == .connectionInvalid)

            withExtendedLifetime((idle, waiting)) {}  // both held to the end
            session.cancel(reason: "done")
            listener.cancel()
        }
    }
}
