// Harbor — benchmark: what an idle loop with many far-away timers costs while it waits.
import Foundation
import Glibc
import Harbor

/// A loop holding 1,000 timers an hour away runs for 5 s: the CPU time its
/// thread used per second of waiting, and how often it woke. Harbor beside
/// Foundation's RunLoop and the floor (one epoll_wait with a timerfd armed an
/// hour away). The three wait at the same time, each on its own new thread:
/// waiting threads do not compete, and thread CPU time is per thread.
struct IdleLoop: RunnableBenchmark {
    let name = "idle-loop"
    let summary = "CPU time of a loop waiting 5 s with 1,000 timers scheduled an hour away"
    static let timers = 1_000

    /// What one idle thread measured.
    struct Idle: Sendable {
        var cpu: Int64
        var wall: Int64
        var wakeUps: Int
    }

    func runAndReport(options: RunOptions, clockCost: Int64) throws {
        let seconds: Int64 = options.quick ? 1 : 5
        let wait = seconds * 1_000_000_000
        let variants: [(name: String, label: String, body: @Sendable () -> Idle)] = [
            ("floor", "epoll_wait on a timerfd armed 1 h away", { @Sendable in Self.floor(wait: wait) }),
            ("harbor", "Loop.run(until:) with 1,000 LoopTimers 1 h away", { @Sendable in Self.harbor(wait: wait) }),
            ("foundation", "RunLoop.run(until:) with 1,000 Timers 1 h away", { @Sendable in Self.foundation(wait: wait) }),
        ].filter { options.only.isEmpty || $0.name == "floor" || options.only.contains($0.name) }
        progress("\(name): \(variants.count) loops waiting \(seconds) s side by side")
        let results = try onNewThreads(variants.map(\.body))

        print("== \(name): \(summary)")
        print("   \(seconds) s wait, \(Self.timers) timers an hour away, the variants side by side on their own threads;"
              + " CPUs allowed: \(allowedCPUs())")
        print("   " + pad("variant", 12) + pad("CPU µs/s", 10, right: true) + pad("CPU µs", 10, right: true)
              + pad("wall s", 9, right: true) + pad("wake-ups", 10, right: true) + "   what")
        for (variant, idle) in zip(variants, results) {
            let perSecond = Int64(Double(idle.cpu) / (Double(idle.wall) / 1e9))
            print("   " + pad(variant.name, 12) + pad(perSecond.microseconds, 10, right: true)
                  + pad(idle.cpu.microseconds, 10, right: true) + pad(formatFixed(Double(idle.wall) / 1e9, decimals: 2), 9, right: true)
                  + pad(String(idle.wakeUps), 10, right: true) + "   " + variant.label)
        }
        print("   CPU: the waiting thread's CPU time (CLOCK_THREAD_CPUTIME_ID) from the start of the run call to its"
              + " return; wake-ups: the thread's voluntary context switches (getrusage RUSAGE_THREAD), each one a sleep.")
        print("   Scheduling the timers happens before the measured wait and is not counted.")
        for (variant, idle) in zip(variants, results) {
            let perSecond = Int64(Double(idle.cpu) / (Double(idle.wall) / 1e9))
            print("RESULT bench=\(name) variant=\(variant.name) median_us=\(perSecond.microseconds) ratio=- round_ratio=-"
                  + " cpu_us=\(idle.cpu.microseconds) cpus=\(allowedCPUs()) wakeups=\(idle.wakeUps) unit=cpu_us_per_s")
        }
        fflush(nil)
    }

    /// Measures `body` (the wait) on the calling thread.
    private static func measured(_ body: () -> Void) -> Idle {
        let switches = threadVoluntarySwitches()
        let cpu = threadCPUNanoseconds()
        let wall = nowNanoseconds()
        body()
        return Idle(cpu: threadCPUNanoseconds() - cpu, wall: nowNanoseconds() - wall,
                    wakeUps: threadVoluntarySwitches() - switches)
    }

    private static func floor(wait: Int64) -> Idle {
        guard let waiter = IdleFloorWaiter() else { return Idle(cpu: -1, wall: 1, wakeUps: -1) }
        return measured { waiter.wait(nanoseconds: wait) }
    }

    private static func harbor(wait: Int64) -> Idle {
        let loop = Loop.current
        let timers = (0..<Self.timers).map { index in
            LoopTimer(after: .seconds(3600) + .milliseconds(index)) { _ in }
        }
        for timer in timers { loop.add(timer, forMode: .default) }
        defer { for timer in timers { timer.invalidate() } }
        return measured { loop.run(until: .now + .nanoseconds(wait)) }
    }

    private static func foundation(wait: Int64) -> Idle {
        let loop = RunLoop.current
        let timers = (0..<Self.timers).map { index in
            Timer(fire: Date(timeIntervalSinceNow: 3600 + Double(index) / 1000), interval: 0, repeats: false) { _ in }
        }
        for timer in timers { loop.add(timer, forMode: .default) }
        defer { for timer in timers { timer.invalidate() } }
        return measured { loop.run(until: Date(timeIntervalSinceNow: Double(wait) / 1e9)) }
    }
}
