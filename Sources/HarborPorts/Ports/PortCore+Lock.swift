// Harbor — a port's lock, through a wrapper for its state: HarborPorts'
// code calls this, never the generic `HarborLock.withLock` (see HarborSystem's
// `lockMutex`). Only HarborPorts takes a port's lock: the transport reaches
// a port's state through PortCore's own calls (Admission/, PortCore+Location).
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
