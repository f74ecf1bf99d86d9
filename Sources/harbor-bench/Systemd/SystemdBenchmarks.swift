// Harbor — benchmarks: a Harbor loop nested in sd-event (S01) against the same loop standing alone.
import Dispatch
import Glibc
import Harbor

/// Runs the S01 nesting benchmarks and prints, for a timer round trip and a
/// port round trip, the standalone and nested costs and their ratio (target
/// ≤ 1.2x). Both shapes run in the same process, one after the other.
func runSystemdBenchmarks() {
    print("== systemd: Harbor loop nested in sd-event (S01) vs standalone ==")
    for (name, body) in [("timer re-arm and fire", timerRounds), ("port round trip", portRounds)] as [(String, (Bool, Int) -> Duration)] {
        let count = 20_000
        _ = body(false, count / 10)   // warm-up
        _ = body(true, count / 10)
        var alone: [Duration] = []
        var nested: [Duration] = []
        for _ in 0..<3 {
            alone.append(body(false, count))
            nested.append(body(true, count))
        }
        let best = (alone.min()!, nested.min()!)
        let aloneNs = Double(best.0 / .nanoseconds(1)) / Double(count)
        let nestedNs = Double(best.1 / .nanoseconds(1)) / Double(count)
        let ratio = nestedNs / aloneNs
        print("\(name): standalone \(Int(aloneNs)) ns, nested in sd-event \(Int(nestedNs)) ns, ratio \((ratio * 100).rounded() / 100)x (target <= 1.2x)")
    }
}

/// Runs `work` on a fresh thread whose loop is either driven by sd-event
/// (nested) or runs itself; `work` sets things up and returns when to stop.
private func onLoopThread(nested: Bool, _ setUp: @escaping @Sendable (Loop, @escaping @Sendable () -> Void) -> Void) -> Duration {
    let result = BenchBox()
    var thread = pthread_t()
    let context = Unmanaged.passRetained(BenchContext(nested: nested, setUp: setUp, result: result)).toOpaque()
    pthread_create(&thread, nil, { raw in
        let context = Unmanaged<BenchContext>.fromOpaque(raw!).takeRetainedValue()
        context.run()
        return nil
    }, context)
    pthread_join(thread, nil)
    return result.elapsed
}

private final class BenchBox: @unchecked Sendable {
    // @unchecked: written by the benchmark thread before it exits, read after pthread_join.
    var elapsed: Duration = .zero
}

private final class BenchContext: @unchecked Sendable {
    // @unchecked: used only by the benchmark thread.
    let nested: Bool
    let setUp: @Sendable (Loop, @escaping @Sendable () -> Void) -> Void
    let result: BenchBox
    init(nested: Bool, setUp: @escaping @Sendable (Loop, @escaping @Sendable () -> Void) -> Void, result: BenchBox) {
        self.nested = nested
        self.setUp = setUp
        self.result = result
    }

    func run() {
        let loop = Loop.current
        let start = ContinuousClock.now
        if nested {
            guard let event = try? SDEventLoop(), let nest = try? LoopInsideSDEvent(loop: loop, event: event) else { return }
            setUp(loop) { try? event.exit() }
            _ = try? event.runUntilExit()
            nest.detach()
        } else {
            let done = LoopSource { }
            loop.add(done, forMode: .default)
            setUp(loop) { loop.stop() }
            loop.runUntilStopped()
            done.invalidate()
        }
        result.elapsed = ContinuousClock.now - start
    }
}

/// `count` fires of a timer that re-arms itself to fire at once.
private func timerRounds(nested: Bool, count: Int) -> Duration {
    onLoopThread(nested: nested) { loop, finish in
        let fired = BenchCounter()
        let timer = LoopTimer(after: .zero) { timer in
            fired.value += 1
            if fired.value == count {
                timer.invalidate()
                finish()
            } else {
                timer.setFireDate(after: .zero)
            }
        }
        loop.add(timer, forMode: .default)
    }
}

/// `count` request/reply round trips between another thread and a port on the loop.
private func portRounds(nested: Bool, count: Int) -> Duration {
    onLoopThread(nested: nested) { loop, finish in
        let reply = ReceiveRight()
        let replySend = reply.makeSendRight()
        guard let server = try? PortSource(ReceiveRight(), { _ in try? replySend.send(Message(id: 2)) }) else { return }
        loop.add(server, forMode: .default)
        let request = server.makeSendRight()
        let client = BenchClient(reply)
        DispatchQueue.global().async {
            for _ in 0..<count {
                try? request.send(Message(id: 1))
                client.receiveOne()
            }
            loop.perform {
                server.invalidate()
                finish()
            }
        }
    }
}

private final class BenchCounter: @unchecked Sendable {
    // @unchecked: used only on the loop's thread.
    var value = 0
}

private final class BenchClient: @unchecked Sendable {
    // @unchecked: used only by the one client thread after creation.
    let reply: ReceiveRight
    init(_ reply: consuming ReceiveRight) { self.reply = reply }
    func receiveOne() { _ = try? reply.receive(timeout: .seconds(5)) }
}
