// Harbor — benchmark: 10,000 ready descriptors served by one loop (RL20), beside a raw epoll sweep.
import CHarborLinux
import Glibc
import Harbor
import Synchronization

/// 10,000 eventfds are made readable, then served: the floor sweeps them
/// with one `epoll_wait` into a 10,000-entry buffer and a `read` each;
/// Harbor serves them as descriptor sources of one loop (each handler reads
/// its eventfd). The time per sweep, and how many `epoll_wait`s (passes)
/// Harbor needed, show it collects many events per wait, not one per event.
struct DescriptorFlood: Benchmark {
    static let descriptors = 10_000
    let name = "descriptor-flood"
    let summary = "serve 10,000 ready descriptors (one sweep = one sample)"
    let unit = "sweep"
    let iterations = (full: 10, quick: 3)
    let notes = [
        "both: 10,000 eventfds are written (not timed), then one sample is the time to serve them all "
            + "(read each eventfd once).",
        "floor: one epoll_wait into a 10,000-entry buffer, then 10,000 reads. No Harbor code.",
        "harbor: 10,000 DescriptorSources in one loop's default mode; run until the last handler stops the "
            + "loop. Its event buffer starts at 64 and doubles while full (to 4096), so a sweep takes a few "
            + "epoll_waits (passes), never one per event; the label shows passes per sweep.",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur > rlim_t(Self.descriptors + 200) else {
            throw BenchmarkFailure("needs \(Self.descriptors + 200) descriptors; the hard limit is \(limit.rlim_max)")
        }
        // Both variants serve the same eventfds (the descriptor limit is 20,000 here).
        let shared = SharedCounters(try makeCounters(Self.descriptors))
        return [RawEpollSweep(shared), HarborDescriptorSweep(shared)]
    }
}

/// Makes `count` eventfds.
private func makeCounters(_ count: Int) throws -> [CInt] {
    try (0..<count).map { _ in
        let fd = eventfd(0, charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)
        guard fd >= 0 else { throw BenchmarkFailure("eventfd failed: errno \(charbor_errno())") }
        return fd
    }
}

/// The eventfds both variants serve; closed when the last variant lets go.
final class SharedCounters {
    let fds: [CInt]
    init(_ fds: [CInt]) { self.fds = fds }
    deinit { for fd in fds { close(fd) } }
}

private func makeReady(_ counters: [CInt]) {
    var one: UInt64 = 1
    for fd in counters { _ = write(fd, &one, 8) }
}

final class RawEpollSweep: BenchmarkVariant {
    let name = "floor"
    let label = "epoll_wait(10,000) + 10,000 reads"
    let isFloor = true
    private let shared: SharedCounters
    private var counters: [CInt] { shared.fds }
    private var epoll: CInt = -1
    private var events: UnsafeMutableBufferPointer<epoll_event> = .allocate(capacity: DescriptorFlood.descriptors)

    init(_ shared: SharedCounters) { self.shared = shared }

    func start() throws {
        epoll = epoll_create1(charbor_EPOLL_CLOEXEC)
        for (index, fd) in counters.enumerated() {
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(index)))
            epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
        }
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        for index in 0..<(min(warmUp, 2) + iterations) {
            makeReady(counters)
            let started = nowNanoseconds()
            var served = 0
            while served < counters.count {
                let count = Int(epoll_wait(epoll, events.baseAddress, CInt(events.count), -1))
                for slot in 0..<max(count, 0) {
                    var value: UInt64 = 0
                    _ = read(counters[Int(events[slot].data.u64)], &value, 8)
                }
                served += max(count, 0)
            }
            if index >= min(warmUp, 2) { samples.append(nowNanoseconds() - started) }
        }
    }

    func stop() {
        close(epoll)
        events.deallocate()
    }
}

final class HarborDescriptorSweep: BenchmarkVariant {
    let name = "harbor"
    let label = "10,000 DescriptorSources in one loop"

    /// Counters the handlers and the observer bump, all on the loop's thread.
    final class Counts: Sendable {
        let served = Atomic(0)
        let passes = Atomic(0)
        let measuredPasses = Atomic(0)
        let sweeps = Atomic(0)
    }

    private let shared: SharedCounters
    private var counters: [CInt] { shared.fds }
    private var sources: [DescriptorSource] = []
    private let counts = Counts()
    private var observer: LoopObserver?

    init(_ shared: SharedCounters) { self.shared = shared }

    func start() throws {
        let loop = Loop.current
        let counts = self.counts
        let total = counters.count
        sources = try counters.map { fd in
            try DescriptorSource(descriptor: fd, events: .readable) { _ in
                var value: UInt64 = 0
                _ = read(fd, &value, 8)
                if counts.served.add(1, ordering: .relaxed).newValue == total { Loop.current.stop() }
            }
        }
        for source in sources { loop.add(source, forMode: .default) }
        let counting = LoopObserver(activities: .beforeTimers) { _ in counts.passes.add(1, ordering: .relaxed) }
        loop.add(counting, forMode: .default)
        observer = counting
    }

    func measure(iterations: Int, warmUp: Int, into samples: inout [Int64]) throws {
        let loop = Loop.current
        for index in 0..<(min(warmUp, 2) + iterations) {
            makeReady(counters)
            counts.served.store(0, ordering: .relaxed)
            let passesBefore = counts.passes.load(ordering: .relaxed)
            let started = nowNanoseconds()
            _ = loop.run(mode: .default, timeout: .seconds(30), returnAfterSourceHandled: false)
            let elapsed = nowNanoseconds() - started
            guard counts.served.load(ordering: .relaxed) == counters.count else { throw BenchmarkFailure("sweep incomplete") }
            if index >= min(warmUp, 2) {
                samples.append(elapsed)
                counts.sweeps.add(1, ordering: .relaxed)
                counts.measuredPasses.add(counts.passes.load(ordering: .relaxed) - passesBefore, ordering: .relaxed)
            }
        }
    }

    func stop() {
        let sweeps = max(1, counts.sweeps.load(ordering: .relaxed))
        print("descriptor-flood harbor: \(counts.measuredPasses.load(ordering: .relaxed) / sweeps) epoll_waits (passes) "
            + "per sweep of \(DescriptorFlood.descriptors) ready descriptors (\(sweeps) sweeps)")
        for source in sources { source.invalidate() }
        observer?.invalidate()
        sources = []
    }
}
