// Harbor — the small Darwin forms issue 22 found missing: a mode's raw value, loop identity,
// CFRunLoopTimerDoesRepeat and fire-date arithmetic, add/remove/contains, and a port source's
// send-once rights and notifications while it is on a loop.
import HarborPorts
import HarborRunLoop
import HarborTestSupport
import HarborSystem
import Synchronization
import Testing

extension RunLoopTests {
    @Suite struct PortingAPITests {
        /// What `NSRunLoop.Mode`-generic code does with a mode: its raw string.
        private static func rawString<Mode: RawRepresentable>(_ mode: Mode) -> Mode.RawValue { mode.rawValue }

        @Test func RL02_aModeIsRawRepresentableByItsName() {
            #expect(LoopMode.default.rawValue == "default")
            #expect(LoopMode(rawValue: "UITrackingRunLoopMode") == "UITrackingRunLoopMode")
            #expect(LoopMode(rawValue: "x").name == "x")
            #expect(Self.rawString(LoopMode("tracking")) == "tracking")
            let modes: Set<LoopMode> = [LoopMode(rawValue: "default"), .default, "a"]
            #expect(modes.count == 2)
        }

        @Test func RL01_aLoopEqualsOnlyItself() throws {
            let worker = LoopWorker(name: "identity")
            defer { worker.stop() }
            let seenOnWorker = HarborLock<Loop?>(nil)
            try worker.performAndWait { seenOnWorker.withLock { $0 = Loop.current } }
            #expect(seenOnWorker.withLock { $0 } == worker.loop)
            onFreshThread {
                #expect(Loop.current == Loop.current)
                #expect(Loop.current != Loop.main)
                #expect(Loop.current != worker.loop)
                let loops: Set<Loop> = [Loop.current, Loop.current, worker.loop, Loop.main]
                #expect(loops.count == 3)
            }
        }

        @Test func RL07_repeatsSaysWhetherATimerHasAnInterval() {
            onFreshThread {
                let loop = Loop.current
                let once = LoopTimer(after: .milliseconds(5)) { _ in }
                let ticker = LoopTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { timer in timer.invalidate() }
                #expect(!once.repeats)                                        // CFRunLoopTimerDoesRepeat
                #expect(ticker.repeats)
                loop.add(once, forMode: .default)
                loop.add(ticker, forMode: .default)
                loop.run(until: .now + .seconds(5))
                #expect(!once.repeats && !once.isValid)
                #expect(ticker.repeats && !ticker.isValid)
            }
        }

        @Test func RL07_nextFireDateArithmeticStaysOnTheGrid() {
            onFreshThread {
                let loop = Loop.current
                let start = ContinuousClock.now + .milliseconds(10)
                let interval = Duration.milliseconds(10)
                let dates = HarborLock<[ContinuousClock.Instant]>([])
                let timer = LoopTimer(at: start, repeating: interval) { timer in
                    let count = dates.withLock { $0.append(timer.nextFireDate); return $0.count }
                    if count == 3 { timer.invalidate() }
                }
                // CFRunLoopTimerGetNextFireDate(t) - CFAbsoluteTimeGetCurrent(): how long until it fires.
                let remaining = timer.nextFireDate - .now
                #expect(remaining > .zero && remaining <= .milliseconds(10))
                loop.add(timer, forMode: .default)
                loop.run(until: .now + .seconds(5))
                // Read in the callout, the next fire date is already one interval on, exactly.
                #expect(dates.withLock { $0 } == [start + interval, start + interval * 2, start + interval * 3])
            }
        }

        @Test func RL03_timersAndSourcesAreAddedRemovedAndFoundPerMode() {
            onFreshThread {
                let loop = Loop.current
                let timer = LoopTimer(after: .seconds(60)) { _ in }
                let source = LoopSource { _ in }
                loop.add(timer, forMode: "tracking")                          // CFRunLoopAddTimer
                loop.add(source, forMode: .common)                            // CFRunLoopAddSource
                #expect(loop.contains(timer, inMode: "tracking"))             // CFRunLoopContainsTimer
                #expect(!loop.contains(timer, inMode: .default))
                #expect(loop.contains(source, inMode: .default))              // CFRunLoopContainsSource
                loop.remove(timer, forMode: "tracking")                       // CFRunLoopRemoveTimer
                loop.remove(source, forMode: .common)
                #expect(!loop.contains(timer, inMode: "tracking"))
                #expect(!loop.contains(source, inMode: .default))
                #expect(timer.isValid)                                        // removing is not invalidating, as in CF
                timer.invalidate()
            }
        }

        @Test func RL09_P06_aPortSourceOnALoopHandsOutSendOnceRights_andHearsItsOwnNotifications() {
            let heard = onFreshThread { () -> [String] in
                do { return try Self.notificationsHeardOnALoop() } catch { return ["threw: \(error)"] }
            }
            #expect(heard == ["reply answer", "no senders", "port destroyed"])
        }

        private static func notificationsHeardOnALoop() throws -> [String] {
            let loop = Loop.current
            let log = EventLog()
            let source = try PortSource(ReceiveRight()) { source, message in
                switch message.notification {
                case .noSenders(let port)? where port == source.portName: log.append("no senders")
                case .portDestroyed?: log.append("port destroyed")
                case nil: log.append("reply \(message.text)")
                case let other?: log.append("other \(other)")
                }
            }
            loop.add(source, forMode: .default)
            // A send-once right as a request's reply right: the reply reaches the handler.
            let server = ReceiveRight()
            var request = Message(id: 1, text: "ask")
            request.setReplyRight(source.makeSendOnceRight())
            try server.makeSendRight().send(request)
            var received = try server.receive(timeout: .seconds(1))
            try received.reply(Message(id: 2, text: "answer"))
            loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
            // No-senders about the source's own port, told to itself while it is on the loop.
            var send: SendRight? = source.makeSendRight()
            source.requestNoSendersNotification(to: source.makeSendOnceRight())
            _ = send
            send = nil
            loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
            // Port-destroyed about another source: released, its port travels to this one.
            var other: PortSource? = try PortSource(ReceiveRight()) { _ in }
            other?.requestPortDestroyedNotification(to: source.makeSendOnceRight())
            other = nil
            loop.run(mode: .default, timeout: .seconds(1), returnAfterSourceHandled: true)
            source.invalidate()
            return log.all
        }
    }
}
