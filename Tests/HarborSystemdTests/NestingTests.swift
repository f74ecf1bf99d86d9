// Harbor — S01 and S02: a run loop inside sd-event, and sd-event inside a run loop, with real libsystemd.
import CHarborLinux
import Glibc
import HarborPorts
import HarborRunLoop
import HarborSystemd
import HarborTestSupport
import Testing

extension SystemdTests {
    @Suite struct NestingTests {
        /// S01: sd-event owns the thread; Harbor's timers, port messages,
        /// posted blocks and signalled sources fire on time, with no polling.
        @Test func S01_harborLoopRunsInsideSDEvent() throws {
            let log = TimedLog()
            let outcome = expectNoDescriptorLeak {
                onFreshThread { () -> (exit: Int32, passes: Int, error: String?) in
                    do {
                        let event = try SDEventLoop()
                        let loop = Loop.current
                        let nest = try LoopInsideSDEvent(loop: loop, event: event)
                        // Phase 1: a repeating Harbor timer, five ticks.
                        let ticks = Cell(0)
                        let tick = LoopTimer(after: .milliseconds(40), repeating: .milliseconds(40)) { timer in
                            log.record("tick")
                            ticks.value += 1
                            if ticks.value == 5 { timer.invalidate() }
                        }
                        loop.add(tick, forMode: .default)
                        // Phase 2, with no Harbor timer left to mask a lost
                        // wake-up: another thread sends, posts and signals.
                        let port = try PortSource(ReceiveRight()) { message in log.record("message \(message.id)") }
                        loop.add(port, forMode: .default)
                        let send = port.makeSendRight()
                        let source = LoopSource { log.record("source") }
                        loop.add(source, forMode: .default)
                        let poster = Cell<TestThread<Void>?>(nil)
                        loop.add(LoopTimer(after: .milliseconds(300)) { _ in
                            poster.value = TestThread {
                                log.record("post message")
                                try? send.send(Message(id: 7))
                                log.record("post block")
                                loop.perform { log.record("block") }
                                log.record("post source")
                                source.signalAndWakeUp()
                            }
                        }, forMode: .default)
                        let exit = try event.addTime(after: .milliseconds(700)) { try? event.exit(code: 3) }
                        let code = try event.runUntilExit()
                        poster.value?.join()
                        exit.cancel()
                        port.invalidate()
                        source.invalidate()
                        let passes = nest.passes
                        nest.detach()
                        return (code, passes, nil)
                    } catch {
                        return (-1, 0, "\(error)")
                    }
                }
            }
            #expect(outcome.error == nil)
            #expect(outcome.exit == 3)
            let ticks = log.times(of: "tick")
            #expect(ticks.count == 5)
            for (index, time) in ticks.enumerated() {
                let due = Double(40 * (index + 1))
                #expect(time >= due - 1, "tick \(index) fired early at \(time) ms")   // never early (1 ms: clock rounding)
                #expect(time <= due + 150, "tick \(index) stalled: \(time) ms, due \(due)")
            }
            for (post, handled) in [("post message", "message 7"), ("post block", "block"), ("post source", "source")] {
                let posted = try #require(log.times(of: post).first)
                let ran = try #require(log.times(of: handled).first, "\(handled) never ran")
                #expect(ran >= posted && ran - posted < 150, "\(handled) took \(ran - posted) ms")
            }
            // Idle between events: a handful of passes, not a spin.
            #expect(outcome.passes > 5 && outcome.passes < 60, "passes: \(outcome.passes)")
        }

        /// S01: sd-event does not dispatch recursively; a Harbor callout that
        /// tries gets a clear typed error, as does another thread.
        @Test func S01_recursiveDispatchIsATypedError() throws {
            let log = TimedLog()
            let outcome = expectNoDescriptorLeak {
                onFreshThread { () -> String? in
                    do {
                        let event = try SDEventLoop()
                        let loop = Loop.current
                        let nest = try LoopInsideSDEvent(loop: loop, event: event)
                        loop.add(LoopTimer(after: .milliseconds(10)) { _ in
                            do { try event.run(timeout: .zero) } catch SystemdError.Code.recursiveDispatch {
                                log.record("run refused")
                            } catch { log.record("other \(error)") }
                            do { try event.runUntilExit() } catch SystemdError.Code.recursiveDispatch {
                                log.record("loop refused")
                            } catch { log.record("other \(error)") }
                            // Nesting the Harbor loop itself is allowed (RL13).
                            let inner = LoopTimer(after: .milliseconds(20)) { _ in log.record("inner") }
                            loop.add(inner, forMode: .default)
                            let result = loop.run(mode: .default, timeout: .milliseconds(500), returnAfterSourceHandled: false)
                            log.record("nested \(result)")
                            let other = TestThread { () -> Bool in
                                do { try event.run(timeout: .zero) } catch SystemdError.Code.wrongThread { return true } catch {}
                                return false
                            }
                            if other.join() { log.record("wrong thread refused") }
                            try? event.exit()
                        }, forMode: .default)
                        try event.runUntilExit()
                        nest.detach()
                        return nil
                    } catch { return "\(error)" }
                }
            }
            #expect(outcome == nil)
            #expect(log.events == ["run refused", "loop refused", "inner", "nested finished", "wrong thread refused"])
        }

        /// S02: Harbor owns the thread; sd-event's time, signal, defer and io
        /// sources fire, and its exit ends the nesting.
        @Test func S02_sdEventRunsInsideHarborLoop() throws {
            let log = TimedLog()
            let outcome = expectNoDescriptorLeak {
                onFreshThread { () -> (iterations: Int, attached: Bool, error: String?) in
                    do {
                        let loop = Loop.current
                        let event = try SDEventLoop()
                        let nest = try SDEventInsideLoop(event: event, loop: loop)
                        let iterations = Cell(0)
                        let counter = LoopObserver(activities: .beforeWaiting) { _ in iterations.value += 1 }
                        loop.add(counter, forMode: .default)
                        let counterDescriptor = eventfd(0, charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)
                        let thread = pthread_self()
                        var sources: [SDEventSource] = []
                        sources.append(try event.addDefer { log.record("sd defer") })
                        sources.append(try event.addSignal(SIGUSR2) { number in log.record(number == SIGUSR2 ? "sd signal" : "sd signal \(number)") })
                        sources.append(try event.addTime(after: .milliseconds(50)) {
                            log.record("sd time")
                            log.record("raise")
                            pthread_kill(thread, SIGUSR2)
                        })
                        sources.append(try event.addIO(counterDescriptor, events: UInt32(EPOLLIN.rawValue)) { _ in
                            var value: UInt64 = 0
                            _ = read(counterDescriptor, &value, 8)
                            log.record("sd io")
                        })
                        sources.append(try event.addTime(after: .milliseconds(400)) {
                            log.record("sd exit")
                            try? event.exit()
                        })
                        // Harbor's own timer still fires, and makes another
                        // thread wake sd-event's io source.
                        let writer = Cell<TestThread<Void>?>(nil)
                        loop.add(LoopTimer(after: .milliseconds(150)) { _ in
                            log.record("harbor timer")
                            writer.value = TestThread {
                                log.record("write")
                                var one: UInt64 = 1
                                _ = write(counterDescriptor, &one, 8)
                            }
                        }, forMode: .default)
                        loop.run(until: .now + .seconds(5))
                        log.record("returned")
                        writer.value?.join()
                        let attached = nest.isAttached
                        sources.removeAll()
                        counter.invalidate()
                        close(counterDescriptor)
                        return (iterations.value, attached, nest.failure.map { "\($0)" })
                    } catch { return (0, true, "\(error)") }
                }
            }
            #expect(outcome.error == nil)
            #expect(!outcome.attached, "sd-event's exit should detach the nesting")
            let expected = ["sd defer", "sd time", "raise", "sd signal", "harbor timer", "write", "sd io", "sd exit", "returned"]
            #expect(log.events == expected)
            let time = try #require(log.times(of: "sd time").first)
            #expect(time >= 49 && time < 200, "sd time at \(time) ms")
            let raised = try #require(log.times(of: "raise").first)
            let signalled = try #require(log.times(of: "sd signal").first)
            #expect(signalled - raised < 150)
            let written = try #require(log.times(of: "write").first)
            let io = try #require(log.times(of: "sd io").first)
            #expect(io - written < 150, "io took \(io - written) ms")
            let exited = try #require(log.times(of: "sd exit").first)
            let returned = try #require(log.times(of: "returned").first)
            #expect(exited >= 399 && returned - exited < 150)
            #expect(outcome.iterations < 40, "Harbor slept \(outcome.iterations) times: polling?")
        }

        /// S02: inside an sd-event callback, running sd-event again is a
        /// typed error; running the Harbor loop nested is allowed and does not
        /// spin even while sd-event has work ready.
        @Test func S02_recursiveDispatchIsATypedError() throws {
            let log = TimedLog()
            let outcome = expectNoDescriptorLeak {
                onFreshThread { () -> (nestedIterations: Int, error: String?) in
                    do {
                        let loop = Loop.current
                        let event = try SDEventLoop()
                        let nest = try SDEventInsideLoop(event: event, loop: loop)
                        let ready = eventfd(1, charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)   // readable from the start
                        let ioSource = Cell<SDEventSource?>(nil)
                        let iterations = Cell(0)
                        let counter = LoopObserver(activities: .beforeWaiting) { _ in iterations.value += 1 }
                        let nestedIterations = Cell(0)
                        let callback = try event.addTime(after: .milliseconds(20)) {
                            do { try event.run(timeout: .zero) } catch SystemdError.Code.recursiveDispatch {
                                log.record("run refused")
                            } catch { log.record("other \(error)") }
                            // sd-event now has a ready io source it cannot dispatch.
                            ioSource.value = try? event.addIO(ready, events: UInt32(EPOLLIN.rawValue)) { _ in
                                var value: UInt64 = 0
                                _ = read(ready, &value, 8)
                                log.record("sd io")
                            }
                            loop.add(counter, forMode: .default)
                            loop.add(LoopTimer(after: .milliseconds(100)) { _ in log.record("inner timer") }, forMode: .default)
                            let result = loop.run(mode: .default, timeout: .milliseconds(200), returnAfterSourceHandled: false)
                            nestedIterations.value = iterations.value
                            counter.invalidate()
                            log.record("nested \(result)")
                        }
                        // Harbor callouts outside sd-event's dispatch may not run it either.
                        loop.add(LoopTimer(after: .milliseconds(5)) { _ in
                            do { try event.run(timeout: .zero) } catch SystemdError.Code.recursiveDispatch {
                                log.record("driven run refused")
                            } catch { log.record("other \(error)") }
                        }, forMode: .default)
                        let stop = try event.addTime(after: .milliseconds(400)) { try? event.exit() }
                        loop.run(until: .now + .seconds(5))
                        callback.cancel()
                        stop.cancel()
                        ioSource.value = nil
                        nest.detach()
                        close(ready)
                        return (nestedIterations.value, nil)
                    } catch { return (0, "\(error)") }
                }
            }
            #expect(outcome.error == nil)
            #expect(log.events == ["driven run refused", "run refused", "inner timer", "nested timedOut", "sd io"])
            #expect(outcome.nestedIterations < 10, "the nested run spun: \(outcome.nestedIterations) sleeps")
        }
    }
}
