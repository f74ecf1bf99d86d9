// Harbor — the variants of the sd-event nesting benchmarks: a Harbor loop run alone or by sd-event, and the timerfd floor.
import CHarborLinux
import Dispatch
import Glibc
import Harbor
import Synchronization
import HarborSystem

/// Runs the calling thread's loop in `.default` until `finish` is called:
/// standing alone, or driven by a fresh sd-event loop (S01). `setUp` adds
/// the items and gets `finish`, which must be called on the loop's thread.
private func driveLoop(nested: Bool, _ setUp: (_ finish: @escaping @Sendable () -> Void) -> Void) {
    let loop = Loop.current
    if nested {
        do {
            let event = try SDEventLoop()
            let nest = try LoopInsideSDEvent(loop: loop, mode: .default, event: event)
            let handle = EventHandle(event)
            setUp { try? handle.event.exit() }
            _ = try event.runUntilExit()
            nest.detach()
        } catch {
            abortBenchmark("sd-event nesting failed: \(error)")
        }
    } else {
        let stopped = Atomic(false)
        setUp {
            stopped.store(true, ordering: .relaxed)
            loop.stop()
        }
        while !stopped.load(ordering: .relaxed) {
            if loop.run(mode: .default, timeout: nil, returnAfterSourceHandled: false) == .finished { break }
        }
    }
}

/// Carries an `SDEventLoop` into a `@Sendable` closure that only its own thread calls.
private final class EventHandle: @unchecked Sendable {
    // @unchecked: the closure holding it runs only on the event loop's thread.
    let event: SDEventLoop
    init(_ event: SDEventLoop) { self.event = event }
}

/// The server side of `sd-event-port`: a `PortSource` on the server thread's loop.
final class NestedPortServer: BenchmarkVariant {
    let name: String
    let label: String
    private let nested: Bool
    private let server: SharedServerThread
    private var ports: ClientPort?

    init(nested: Bool, server: SharedServerThread) {
        self.nested = nested
        self.server = server
        name = nested ? "loop-in-sd-event" : "loop-alone"
        label = nested ? "PortSource on the loop, sd-event drives it (S01)" : "PortSource on the loop, Loop.run"
    }

    func start() throws {
        ports = ClientPort()
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        guard let ports else { throw BenchmarkFailure("measure before start") }
        let toClient = ports.toClient
        let nested = self.nested
        let handOver = HarborLock<SendRight?>(nil)
        let ready = DispatchSemaphore(value: 0)
        server.thread.start {
            var kept: PortSource?
            driveLoop(nested: nested) { finish in
                let source: PortSource
                do {
                    source = try PortSource(ReceiveRight()) { request in
                        if request.id == 0 { return finish() }
                        do { try toClient.send(Message(id: 2)) } catch {
                            abortBenchmark("server reply failed: \(error)")
                        }
                    }
                } catch {
                    abortBenchmark("PortSource failed: \(error)")
                }
                Loop.current.add(source, forMode: .default)
                handOver.withLock { $0 = source.makeSendRight() }
                kept = source
                ready.signal()
            }
            // The port dies with its source, and the mode is empty again.
            kept?.invalidate()
        }
        ready.wait()
        guard let toServer = handOver.withLock({ $0 }) else { throw BenchmarkFailure("no server port") }
        try measureEach(iterations: iterations, warmUp: warmUp, into: &samples) {
            try toServer.send(Message(id: 1))
            let reply = try ports.client.receive()
            guard reply.id == 2 else { throw BenchmarkFailure("unexpected reply id \(reply.id)") }
        }
        try toServer.send(Message(id: 0))
        server.thread.waitUntilIdle()
    }

    func stop() { ports = nil }
}

/// The client's reply port and a send right to it, made once per run.
private final class ClientPort: Sendable {
    let client = ReceiveRight()
    let toClient: SendRight
    init() { toClient = client.makeSendRight() }
}

/// The timer side of `sd-event-timer`: a self-re-arming `LoopTimer`.
final class NestedTimerLoop: BenchmarkVariant {
    let name: String
    let label: String
    private let nested: Bool
    private let thread: SharedServerThread

    init(nested: Bool, thread: SharedServerThread) {
        self.nested = nested
        self.thread = thread
        name = nested ? "loop-in-sd-event" : "loop-alone"
        label = nested ? "LoopTimer re-armed to now, sd-event drives the loop (S01)" : "LoopTimer re-armed to now, Loop.run"
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let nested = self.nested
        let recorded = SampleBox(capacity: iterations)
        let total = warmUp + iterations
        thread.thread.start {
            driveLoop(nested: nested) { finish in
                let counter = SampleBox(capacity: 0)
                counter.last = nowNanoseconds()
                let timer = LoopTimer(after: .zero) { timer in
                    let now = nowNanoseconds()
                    if counter.fired >= warmUp { recorded.samples.append(now - counter.last) }
                    counter.last = now
                    counter.fired += 1
                    if counter.fired == total {
                        timer.invalidate()
                        finish()
                    } else {
                        timer.setFireDate(after: .zero)
                    }
                }
                Loop.current.add(timer, forMode: .default)
            }
        }
        thread.thread.waitUntilIdle()
        samples.append(contentsOf: recorded.samples)
    }

    func stop() {}
}

/// Samples and a counter written by the benchmark thread, read after it finished its job.
private final class SampleBox: @unchecked Sendable {
    // @unchecked: written only by the harness thread inside one job; read by
    // the main thread after `waitUntilIdle()` (the semaphore orders them).
    var samples: [Int64] = []
    var fired = 0
    var last: Int64 = 0
    init(capacity: Int) { samples.reserveCapacity(capacity) }
}

/// The timer floor: arm a timerfd to now, `epoll_wait`, `read`, on one thread.
final class TimerfdFloor: BenchmarkVariant {
    let name = "floor"
    let label = "raw timerfd_settime(now) + epoll_wait + read"
    let isFloor = true
    private let thread: SharedServerThread

    init(thread: SharedServerThread) { self.thread = thread }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let recorded = SampleBox(capacity: iterations)
        let failed = Atomic(false)
        thread.thread.start {
            let poller = epoll_create1(Int32(charbor_EPOLL_CLOEXEC))
            let timer = timerfd_create(CLOCK_MONOTONIC, Int32(charbor_TFD_CLOEXEC | charbor_TFD_NONBLOCK))
            defer {
                if timer >= 0 { close(timer) }
                if poller >= 0 { close(poller) }
            }
            var registration = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 1))
            guard poller >= 0, timer >= 0, epoll_ctl(poller, EPOLL_CTL_ADD, timer, &registration) == 0 else {
                failed.store(true, ordering: .relaxed)
                return
            }
            var event = epoll_event()
            var value: UInt64 = 0
            var last = nowNanoseconds()
            for index in 0..<(warmUp + iterations) {
                var spec = itimerspec()
                clock_gettime(CLOCK_MONOTONIC, &spec.it_value)
                _ = timerfd_settime(timer, Int32(charbor_TFD_TIMER_ABSTIME), &spec, nil)
                while epoll_wait(poller, &event, 1, -1) != 1 {}
                _ = read(timer, &value, 8)
                let end = nowNanoseconds()
                if index >= warmUp { recorded.samples.append(end - last) }
                last = end
            }
        }
        thread.thread.waitUntilIdle()
        if failed.load(ordering: .relaxed) { throw BenchmarkFailure("timerfd/epoll set-up failed") }
        samples.append(contentsOf: recorded.samples)
    }

    func stop() {}
}
