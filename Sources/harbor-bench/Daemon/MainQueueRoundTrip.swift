// Harbor — benchmark: DispatchQueue.main.async round trips drained by Harbor's main loop vs Foundation's (RL14).
import CHarborLinux
import Dispatch
import Foundation
import Glibc
import Harbor

/// A helper thread posts `DispatchQueue.main.async { reply }` and waits for
/// the reply while the main thread runs a loop that drains the main queue:
/// Harbor's `Loop.main`, or Foundation's `RunLoop.main` (CFRunLoop). The
/// posted work is identical; only the loop draining it differs. The floor
/// is the eventfd/epoll ping-pong between the same two threads.
struct MainQueueRoundTrip: Benchmark {
    let name = "main-queue-round-trip"
    let summary = "DispatchQueue.main.async round trip through Harbor's main loop vs Foundation's"
    let unit = "round trip"
    let iterations = (full: 1000, quick: 300)
    let notes = [
        "floor: eventfd + epoll ping-pong between the main thread and one helper thread.",
        "harbor-main-loop: the main thread runs Loop.main (default mode); the helper thread posts "
            + "DispatchQueue.main.async { write the helper's eventfd } and waits on that eventfd.",
        "foundation-main-runloop: the same posts, with the main thread in RunLoop.main.run(mode:before:).",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let helper = try SharedServerThread(name: "bench-poster")
        return [EventfdPingPong(server: helper), MainQueueThroughLoop(.harbor, helper: helper),
                MainQueueThroughLoop(.foundation, helper: helper)]
    }
}

final class MainQueueThroughLoop: BenchmarkVariant {
    enum Drainer { case harbor, foundation }
    let drainer: Drainer
    var name: String { drainer == .harbor ? "harbor-main-loop" : "foundation-main-runloop" }
    var label: String { drainer == .harbor ? "Loop.main drains DispatchQueue.main" : "RunLoop.main drains DispatchQueue.main" }
    private let helper: SharedServerThread
    private let reply: CInt

    init(_ drainer: Drainer, helper: SharedServerThread) {
        self.drainer = drainer
        self.helper = helper
        reply = eventfd(0, charbor_EFD_CLOEXEC)
    }

    func start() throws {}

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let reply = self.reply
        let collected = SampleBox()
        let finished = FinishFlag()
        helper.thread.start {
            var local: [Int64] = []
            local.reserveCapacity(iterations)
            measureEach(iterations: iterations, warmUp: warmUp, into: &local) {
                DispatchQueue.main.async {
                    var one: UInt64 = 1
                    _ = write(reply, &one, 8)
                }
                var value: UInt64 = 0
                _ = read(reply, &value, 8)
            }
            collected.samples = local
            DispatchQueue.main.async {
                finished.done = true
                Loop.main.stop()
            }
        }
        switch drainer {
        case .harbor:
            while !finished.done { Loop.main.runUntilStopped() }
        case .foundation:
            while !finished.done { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
        }
        helper.thread.waitUntilIdle()
        samples.append(contentsOf: collected.samples)
    }

    func stop() { close(reply) }
}

/// Samples handed from the helper thread to the main thread.
private final class SampleBox: @unchecked Sendable {
    // @unchecked: written by the helper before its job ends, read after waitUntilIdle().
    var samples: [Int64] = []
}

/// Set on the main thread by the last posted block; read there too.
private final class FinishFlag: @unchecked Sendable {
    // @unchecked: only the main thread touches it (in a main-queue block and the loop around it).
    var done = false
}
