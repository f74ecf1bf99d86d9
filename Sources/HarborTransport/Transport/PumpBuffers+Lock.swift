// Harbor — the pump lock, through a wrapper for its buffers: the pump calls
// this, never the generic `HarborLock.withLock`, which another module
// cannot specialise for a noncopyable result (see HarborSystem's `lockMutex`).
import HarborSystem

extension HarborLock where Value == PumpBuffers {
    /// Runs `body` with the pump's buffers, under the pump lock.
    @inline(__always)
    func withBuffers<Result: ~Copyable>(_ body: (inout PumpBuffers) -> Result) -> Result {
        lockMutex(mutex)
        defer { unlockMutex(mutex) }
        return body(&value.pointee)
    }
}
