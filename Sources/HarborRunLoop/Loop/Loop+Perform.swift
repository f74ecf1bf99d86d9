// Harbor — posting work to a loop, from its own thread or any other.
import HarborPorts

extension Loop {
    /// Queues `block` to run at the loop's next pass in a common mode, and
    /// wakes the loop if it sleeps.
    ///
    /// Which modes are common is decided when the block runs, not when it is
    /// posted (CF copies the set at post time; the difference only shows if
    /// the common set changes in between).
    ///
    /// A performed block counts as "handled source": it ends
    /// ``run(mode:before:)``, as `performSelector:onThread:` (a version-0
    /// source on Darwin) does.
    ///
    /// **Cost:** the block's own allocation, one lock, and one eventfd write
    /// only if the loop sleeps.
    /// **Thread safety:** any thread.
    /// **CF equivalent:** `CFRunLoopPerformBlock(rl, kCFRunLoopCommonModes, …)`
    /// + `CFRunLoopWakeUp`; `performSelector:onThread:withObject:waitUntilDone:NO`.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        post(PendingBlock(sequence: 0, modes: .common, block: block, completion: nil))
    }

    /// Queues `block` for the next pass in one of `modes` (which may include
    /// `.common`), waking the loop if it sleeps.
    /// **CF equivalent:** `performSelector:onThread:withObject:waitUntilDone:modes:`.
    public func perform(inModes modes: [LoopMode], _ block: @escaping @Sendable () -> Void) {
        let selector: PendingBlock.Modes = modes == [.common] ? .common
            : modes.count == 1 ? .one(modes[0]) : .some(modes)
        post(PendingBlock(sequence: 0, modes: selector, block: block, completion: nil))
    }

    /// Runs `block` on the loop's thread and returns once it ran: inline when
    /// called on that very thread, otherwise queued for `modes` (common by
    /// default) while the caller waits.
    /// - Throws: ``LoopError/Code/loopTerminated`` if the loop's thread exits
    ///   before the block could run.
    /// **CF equivalent:** `performSelector:onThread:withObject:waitUntilDone:YES`.
    public func performAndWait(
        inModes modes: [LoopMode] = [.common], _ block: @escaping @Sendable () -> Void
    ) throws(LoopError) {
        if isCurrent {
            block()
            return
        }
        let completion = BlockCompletion()
        let selector: PendingBlock.Modes = modes == [.common] ? .common
            : modes.count == 1 ? .one(modes[0]) : .some(modes)
        post(PendingBlock(sequence: 0, modes: selector, block: block, completion: completion))
        guard completion.wait() else {
            throw LoopError(.loopTerminated, "the loop of thread \(threadID) ended before the block ran")
        }
    }

    /// Runs `block` after `delay` in `modes` (default: `.default`, as
    /// `performSelector:withObject:afterDelay:`), as a one-shot timer.
    /// Returns the timer: ``LoopTimer/invalidate()`` cancels the perform.
    /// **CF equivalent:** `performSelector:withObject:afterDelay:inModes:`,
    /// `cancelPreviousPerformRequestsWithTarget:`.
    @discardableResult
    public func perform(
        after delay: Duration, inModes modes: [LoopMode] = [.default], _ block: @escaping @Sendable () -> Void
    ) -> LoopTimer {
        let timer = LoopTimer(after: delay, label: "delayed perform") { _ in block() }
        for mode in modes { add(timer, forMode: mode) }
        return timer
    }

    private func post(_ pending: PendingBlock) {
        var pending = pending
        let (accepted, wake) = state.withLock { state -> (Bool, WakeUpCounter?) in
            guard !state.terminated else { return (false, nil) }
            pending.sequence = state.nextBlockSequence
            state.nextBlockSequence &+= 1
            state.blocks.append(pending)
            return (true, state.wakeUpIfWaiting())
        }
        wake?.counter.signal()  // after unlocking: see `LoopState.wakeUpIfWaiting`
        if !accepted { pending.completion?.finish(ran: false) }
    }

    /// Runs the blocks queued before this call that belong to `mode`, one at a
    /// time with no lock held. Blocks they post wait for a later pass.
    /// Returns whether any ran.
    func doBlocks(_ mode: ModeState) -> Bool {
        let limit = state.withLock { state -> UInt64? in
            state.blocks.isEmpty ? nil : state.nextBlockSequence
        }
        guard let limit else { return false }
        var ran = false
        while true {
            let next = state.withLock { state -> PendingBlock? in
                guard let index = state.blocks.firstIndex(where: { $0.sequence < limit && $0.runs(in: mode) })
                else { return nil }
                return state.blocks.remove(at: index)
            }
            guard let next else { return ran }
            Callout.block(next.block)
            next.completion?.finish(ran: true)
            ran = true
        }
    }
}
