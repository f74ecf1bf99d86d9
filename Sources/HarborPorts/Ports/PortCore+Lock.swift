// Harbor — a port's lock, through a wrapper for its state: HarborPorts'
// code calls this, never the generic `HarborLock.withLock` (see HarborSystem's
// `lockMutex`); HarborTransport has its own copy of these lines.
import HarborSystem

extension HarborLock where Value == PortCore.Guarded {
    /// Runs `body` with the port's state, under the port's lock.
    @inline(__always)
    func withGuarded<Result>(_ body: (inout PortCore.Guarded) -> Result) -> Result {
        lockMutex(mutex)
        defer { unlockMutex(mutex) }
        return body(&value.pointee)
    }
}
