// Harbor — a port's lock and the pump lock, through wrappers for their values: HarborTransport's
// code calls this, never the generic `HarborLock.withLock` (see HarborSystem's
// `lockMutex`). The same lines as HarborPorts' own copy, which another module
// cannot call without paying for a generic call.
import HarborPorts
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

extension HarborLock where Value == PumpBuffers {
    /// Runs `body` with the pump's buffers, under the pump lock.
    @inline(__always)
    func withBuffers<Result: ~Copyable>(_ body: (inout PumpBuffers) -> Result) -> Result {
        lockMutex(mutex)
        defer { unlockMutex(mutex) }
        return body(&value.pointee)
    }
}
