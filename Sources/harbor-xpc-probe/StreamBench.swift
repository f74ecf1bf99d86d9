// harbor-xpc-probe — how long a subscriber takes to consume a stream of events, in this process.
import Glibc
import HarborSystem
import HarborXPC

/// `stream-bench NAME N MODE`: a listener of this process publishes N
/// ticks as fast as it can (the `.wait` policy: none is lost) to a
/// subscription of this process, which takes them by MODE: `next` (the
/// blocking `next()`), `await` (`for try await`) or `handler`
/// (`setEventHandler`). Prints "ms T" for the time from the first publish
/// to the last event taken.
enum StreamBench {
    static func run(_ name: String, count: Int, mode: String) {
        do {
            let ticks = try XPCPublisher<Tick>(policy: .wait(keep: count, timeout: .seconds(60)))
            let listener = try XPCListener(service: name) { request in
                request.accept { message in
                    if message.isSubscriptionRequest { try? ticks.subscribe(message) }
                    return nil
                }
            }
            let session = try XPCSession(machService: name)
            let subscription = try session.subscribe(Ask(op: "subscribe", n: 0), as: Tick.self, queueLimit: 64)
            let done = HarborLock<Int?>(nil)
            let start = ContinuousClock.now
            let publisher = SystemThread.start {
                for n in 0..<count { ticks.publish(Tick(n: n)) }
            }
            switch mode {
            case "next":
                for _ in 0..<count { _ = try subscription.next() }
                done.withLock { $0 = count }
            case "await":
                Task {
                    var taken = 0
                    for try await _ in subscription {
                        taken += 1
                        if taken == count { break }
                    }
                    done.withLock { [taken] in $0 = taken }
                }
            default:
                let taken = HarborLock(0)
                try subscription.setEventHandler { result in
                    guard case .success = result else { return }
                    if taken.withLock({ $0 += 1; return $0 }) == count { done.withLock { $0 = count } }
                }
            }
            while done.withLock({ $0 }) == nil { usleep(100) }
            let elapsed = ContinuousClock.now - start
            publisher.join()
            let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3
            line("ms \(ms)")
            subscription.cancel()
            session.cancel(reason: "done")
            listener.cancel()
        } catch {
            line("error \(error)")
            exit(1)
        }
    }
}
