// Harbor — per-thread CPU time and sleeps, and a fresh thread to measure on.
import Glibc
import HarborPorts
import HarborSystem

/// CPU time the calling thread has used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
func threadCPUNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
}

/// How many times the calling thread has gone to sleep (voluntary context
/// switches, `getrusage(RUSAGE_THREAD)`): each wake-up of an idle loop is one.
func threadVoluntarySwitches() -> Int {
    var usage = rusage()
    // RUSAGE_THREAD is 1 (Linux); Glibc's module does not export the name.
    guard getrusage(__rusage_who_t(1), &usage) == 0 else { return -1 }
    return Int(usage.ru_nvcsw)
}

/// Runs `body` on a new plain pthread and returns its result once the thread
/// has exited (so whatever the thread's run loop held is gone too).
func onNewThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) throws -> Result {
    try onNewThreads([body])[0]
}

/// Runs each body on its own new pthread, all at once, and returns their
/// results once every thread has exited.
func onNewThreads<Result: Sendable>(_ bodies: [@Sendable () -> Result]) throws -> [Result] {
    let slots = bodies.map { _ in ResultSlot<Result>() }
    var threads: [SystemThread] = []
    defer { for thread in threads { thread.join() } }
    for (body, slot) in zip(bodies, slots) {
        do {
            threads.append(try SystemThread.spawn { slot.value = body() })
        } catch {
            throw BenchmarkFailure("pthread_create failed: \(error)")
        }
    }
    for thread in threads { thread.join() }
    threads = []
    return try slots.map { slot in
        guard let result = slot.value else { throw BenchmarkFailure("thread returned nothing") }
        return result
    }
}

/// One thread's result.
private final class ResultSlot<Result: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is written by the thread before it exits and read
    // only after pthread_join, which orders the two.
    var value: Result?
}
