// Harbor — the checks both nestings (a Harbor loop inside sd-event, sd-event inside a Harbor loop) make first.
import HarborRunLoop

extension SDEventLoop {
    /// What ``LoopInsideSDEvent`` and ``SDEventInsideLoop`` check before
    /// anything else: this loop and `loop` both belong to the calling thread
    /// (`wrongThread` says why `loop` must), and `mode` is one mode.
    func checkNesting(_ call: String, loop: Loop, mode: LoopMode, wrongThread: String) throws(SystemdError) {
        try checkThread(call)
        guard loop.isCurrent else { throw SystemdError(.wrongThread, call: call, wrongThread) }
        guard mode != .common else {
            throw SystemdError(.invalidArgument, call: call, "`.common` is a set of modes; name one mode")
        }
    }
}
