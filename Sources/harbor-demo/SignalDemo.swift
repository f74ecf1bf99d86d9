// Harbor — the demo's signal part: SIGTERM arrives as a source on the main run loop (RL19).
import Glibc
import Harbor

/// Blocks SIGTERM in the calling thread and every thread it starts later, so
/// the kernel queues it for the signal source instead of killing us. Call it
/// first thing in `main`, before any thread starts.
func prepareSignalDemo() throws {
    try SignalSource.block([SIGTERM])
}

/// Runs the main loop with a SIGTERM signal source and a ticking timer until
/// SIGTERM arrives, then stops cleanly. Call on the main thread, after
/// ``prepareSignalDemo()``.
/// - Parameter selfSignalAfter: send ourselves SIGTERM after this long;
///   `nil` waits for one from outside (`kill -TERM <pid>`).
func runSignalDemo(selfSignalAfter: Duration? = .milliseconds(300)) throws {
    print("signals: SIGTERM handled as a source on the main run loop (pid \(getpid()))")
    let loop = Loop.main
    let term = try SignalSource(signals: [SIGTERM]) { info in
        print("  SIGTERM from pid \(info.senderPID): stopping the main loop")
        Loop.main.stop()
    }
    loop.add(term, forMode: .default)
    let ticks = TickCounter()
    let ticker = LoopTimer(after: .milliseconds(100), repeating: .milliseconds(100)) { _ in
        print("  tick \(ticks.next()) (the loop is serving its sources)")
    }
    loop.add(ticker, forMode: .default)
    if let delay = selfSignalAfter {
        loop.perform(after: delay) {
            print("  sending ourselves SIGTERM")
            kill(getpid(), SIGTERM)
        }
    } else {
        print("  waiting for SIGTERM: kill -TERM \(getpid())")
    }
    loop.runUntilStopped()
    ticker.invalidate()
    term.invalidate()
    print("  main loop stopped cleanly after SIGTERM")
}

/// Counts timer ticks; touched only on the main loop's thread.
private final class TickCounter: @unchecked Sendable {
    // @unchecked: only the main loop's thread (the timer's handler) uses it.
    private var count = 0
    func next() -> Int {
        count += 1
        return count
    }
}
