// Harbor — benchmark: a timer re-armed and fired by a Harbor loop standing alone and nested in sd-event (S01).

/// One thread, one timer: each time it fires its handler re-arms it to fire
/// at once (`setFireDate(after: .zero)`). A sample is the time from one
/// fire to the next. The same loop on the same thread runs standing alone
/// and nested in sd-event, rounds interleaved; target nested ≤ 1.2 × standalone.
struct NestedTimerFire: Benchmark {
    let name = "sd-event-timer"
    let summary = "timer re-arm + fire on a Harbor loop nested in sd-event vs standing alone"
    let unit = "fire"
    let iterations = (full: 2000, quick: 500)
    let reference: String? = "loop-alone"

    let notes = [
        "floor: one thread arms a timerfd to now (timerfd_settime, absolute), epoll_waits on it and reads it.",
        "loop-alone: a LoopTimer whose handler calls setFireDate(after: .zero); the thread runs its Loop.",
        "loop-in-sd-event: the same, with the loop driven by sd-event (LoopInsideSDEvent): the mode's "
            + "timerfd makes the waitset readable, sd-event's epoll_wait returns, one Harbor pass fires the timer.",
        "All three run on one long-lived thread. ×loop-alone is the issue's ratio (target ≤ 1.2).",
    ]

    func makeVariants() throws -> [any BenchmarkVariant] {
        let thread = try SharedServerThread(name: "bench-nest-timer")
        return [
            TimerfdFloor(thread: thread),
            NestedTimerLoop(nested: false, thread: thread),
            NestedTimerLoop(nested: true, thread: thread),
        ]
    }
}
