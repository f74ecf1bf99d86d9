// Harbor — one run of a mode, top to bottom, in Darwin's order.
import HarborPorts
import HarborSystem

extension Loop {
    /// The passes of one run (CF's `__CFRunLoopRun`). Each numbered step is
    /// one step of CFRunLoop's iteration; every callout happens with no lock
    /// held, and everything is looked up again after it.
    func iterate(_ mode: ModeState, deadline: Int64?, returnAfterSourceHandled: Bool) -> LoopRunResult {
        let depth = frames.depth
        frames.depth += 1
        defer { frames.depth -= 1 }
        var events = frames.buffer(at: depth)
        if isMain { watchMainQueue(in: mode) }

        // A stop sent by an `entry` observer (or another thread since the
        // run began) ends the run before its first pass, as in CF.
        if takeStopRequest() { return .stopped }
        let timeoutIsZero = deadline.map { $0 == Loop.passedDeadline || $0 <= MonotonicInstant.now.nanoseconds } ?? false

        while true {
            // 1-2. Observers: timers, then sources, are about to be looked at.
            notifyObservers(mode, .beforeTimers)
            notifyObservers(mode, .beforeSources)

            // 3-5. Blocks, signalled version-0 sources, blocks again.
            var handled = doBlocks(mode)
            if doSources(mode, stopAfterOne: returnAfterSourceHandled) {
                handled = true
                _ = doBlocks(mode)
            }

            // 6. Sleep only if nothing ran and time is left; otherwise poll.
            var poll = handled || timeoutIsZero
            if !poll { notifyObservers(mode, .beforeWaiting) }
            if !prepareToWait(mode, poll: poll) { poll = true }
            let count = wait(mode, into: events, poll: poll, deadline: deadline)
            if !poll { notifyObservers(mode, .afterWaiting) }

            // 7. What woke us: timers first, then the main queue, then ready
            //    waitset sources (ports, descriptors, processes, signals)
            //    in ascending `order`, as CF serves
            //    sources (the kernel reports them in the order they became
            //    ready). The wake-up eventfd needs nothing: it is
            //    edge-triggered and never read.
            var timerFired = false
            var mainQueueReady = false
            var readySources = 0
            var lastSource = 0
            for index in 0..<count {
                switch WaitToken(rawValue: events[index].token)?.kind {
                case .timer: timerFired = true
                case .mainQueue: mainQueueReady = true
                case .source: readySources += 1; lastSource = index
                case .wakeUp, nil: continue
                }
            }
            if timerFired { doTimers(mode) }
            if mainQueueReady && doMainQueue() { handled = true }
            if readySources == 1 {
                // The usual case: nothing to sort.
                if doReady(events[lastSource], in: mode) { handled = true }
            } else if readySources > 1 {
                if doReadyInOrder(events, count: count, depth: depth, in: mode) { handled = true }
            }

            // 8. Blocks posted by whatever just ran.
            if doBlocks(mode) { handled = true }
            // A full buffer means more was ready: take more per wait next time (RL20).
            if count == events.count { events = frames.grow(at: depth) }

            // 9. Why to return, in CF's order of precedence.
            if handled && returnAfterSourceHandled { return .handledSource }
            if let deadline, deadline == Loop.passedDeadline || MonotonicInstant.now.nanoseconds >= deadline { return .timedOut }
            if takeStopRequest() { return .stopped }
            if state.withLock({ isEmpty(mode, $0) }) { return .finished }
        }
    }

    /// Sleeps in the mode's epoll set until something is ready or `deadline`;
    /// with `poll`, only looks. Returns how many events are in `events`.
    private func wait(
        _ mode: ModeState, into events: UnsafeMutableBufferPointer<EpollEvent>, poll: Bool, deadline: Int64?
    ) -> Int {
        var timeout: CInt = -1
        if poll {
            timeout = 0
        } else if let deadline {
            let left = deadline - MonotonicInstant.now.nanoseconds
            // Round up, so the loop never wakes a hair early and spins.
            timeout = left <= 0 ? 0 : CInt(clamping: (left + 999_999) / 1_000_000)
        }
        let count: Int
        do {
            count = try mode.epoll.wait(into: events, timeoutMilliseconds: timeout)
        } catch {
            // Only EBADF/EFAULT/EINVAL are possible, and all mean our own
            // epoll descriptor is broken: a bug, not a runtime condition.
            preconditionFailure("Harbor: epoll_wait on mode \(mode.name) failed: \(error)")
        }
        if !poll { state.withLock { $0.isWaiting = false } }
        return count
    }

    /// Arms the mode's timerfd to its wake-up deadline (the latest fire
    /// date its earliest hard deadline allows: `ModeTimers.wakeDeadline`), then — in one
    /// critical section with the checks — marks the loop as sleeping, unless
    /// work is already waiting (then returns false: poll instead). Doing the
    /// check and the mark under the lock every poster takes is what makes a
    /// lost wake-up impossible.
    func prepareToWait(_ mode: ModeState, poll: Bool) -> Bool {
        while true {
            // One critical section when the timerfd is armed as it should
            // be (the common case); otherwise it is re-armed outside the
            // lock and the checks run again.
            let outcome = state.withLock { state -> (ready: Bool?, rearmTo: Int64?) in
                let wanted = mode.timers.wakeDeadline
                guard wanted == mode.armedDeadline else { return (nil, wanted) }
                if poll { return (true, nil) }
                // An emptied mode counts as work: its last item may have gone
                // (a timer invalidated on another thread) after this pass
                // checked, when nobody had a sleeping loop to wake, and a
                // loop asleep in an empty mode would never return.
                if state.stopRequested || mode.sources.contains(where: \.isSignalled)
                    || state.blocks.contains(where: { $0.runs(in: mode) }) || isEmpty(mode, state) {
                    return (false, nil)
                }
                state.isWaiting = true
                return (true, nil)
            }
            if let ready = outcome.ready { return ready }
            rearm(mode, to: outcome.rearmTo)
        }
    }

    private func rearm(_ mode: ModeState, to deadline: Int64?) {
        do {
            if let deadline {
                try mode.timerDescriptor.arm(at: MonotonicInstant(nanoseconds: deadline))
            } else {
                try mode.timerDescriptor.disarm()
            }
        } catch {
            preconditionFailure("Harbor: timerfd_settime on mode \(mode.name) failed: \(error)")
        }
        state.withLock { _ in mode.armedDeadline = deadline }
    }

    func takeStopRequest() -> Bool {
        state.withLock { state in
            defer { state.stopRequested = false }
            return state.stopRequested
        }
    }
}
