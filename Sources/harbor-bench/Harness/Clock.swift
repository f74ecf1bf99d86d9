// Harbor — the benchmark clock: CLOCK_MONOTONIC through the vDSO, in nanoseconds.
import CHarborLinux
import Glibc

/// Nanoseconds on `CLOCK_MONOTONIC`. A vDSO call (no system call) when the
/// clock source is the TSC; `timerOverhead()` says what one read costs here.
@inline(__always)
func nowNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
}

/// The median cost of one `nowNanoseconds()` call, to print beside results.
func timerOverhead() -> Int64 {
    var samples: [Int64] = []
    samples.reserveCapacity(1000)
    for _ in 0..<1000 {
        let start = nowNanoseconds()
        for _ in 0..<100 { _ = nowNanoseconds() }
        samples.append((nowNanoseconds() - start) / 101)
    }
    return Statistics(samples).median
}

/// CPU time this process has used, all threads, in nanoseconds. Compared
/// with wall time it shows whether a variant sleeps or spins while it waits.
func processCPUNanoseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
}

/// Sleeps until the monotonic clock passes `instant` (nanoseconds). For a
/// benchmark waiting on the clock itself (untimed), never to synchronise.
func sleepUntil(_ instant: Int64) {
    while true {
        let left = instant - nowNanoseconds()
        if left <= 0 { return }
        var request = timespec()
        request.tv_sec = Int(left / 1_000_000_000)
        request.tv_nsec = Int(left % 1_000_000_000)
        _ = nanosleep(&request, nil)
    }
}
