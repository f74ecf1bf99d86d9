// Harbor — the locks that guard timers' state: a fixed table shared by all timers, picked by address.
//
// A timer used to own a HarborLock, which is a pthread mutex in a heap
// allocation of its own: a second malloc and free per timer, and its state
// one pointer hop away from the object in another cold cache line. At a
// million timers that was most of the cost of adding one. The state now
// lives in the object, and the lock is one of `count` mutexes allocated once
// (a "striped" lock): two timers may share a stripe, which costs only
// contention, since no code holds one timer's lock while taking another's
// (the lock order is the loop's lock, then one timer's). ThreadSanitizer
// still sees every access ordered by a pthread mutex.
import HarborPorts

/// The shared table of timer locks.
enum TimerLockStripes {
    /// A power of two: enough that threads working on different timers
    /// rarely meet on one stripe.
    static let count = 256

    final class Stripe: Sendable {
        let lock = HarborLock(())
    }

    static let stripes: [Stripe] = (0..<count).map { _ in Stripe() }

    /// The stripe of `timer`: its address mixed (objects are 16-aligned and
    /// often allocated in runs) and cut to the table's size.
    @inline(__always)
    static func stripe(of timer: LoopTimer) -> Stripe {
        // The address itself: `ObjectIdentifier.hashValue` runs SipHash,
        // tens of nanoseconds on every lock.
        let address = UInt(bitPattern: ObjectIdentifier(timer))
        let mixed = (address &* 0x9E37_79B9_7F4A_7C15) >> (UInt.bitWidth - 8)
        return stripes[Int(mixed & UInt(count - 1))]
    }
}

/// `LoopTimer.state`: the timer's state under its stripe's lock, with
/// `HarborLock`'s `withLock` shape. Not recursive: a body must not take the
/// lock of this or any other timer.
struct TimerStateLock {
    unowned(unsafe) let timer: LoopTimer

    @inline(__always)
    func withLock<Result>(_ body: (inout LoopTimer.State) -> Result) -> Result {
        let timer = self.timer
        var result: Result?
        TimerLockStripes.stripe(of: timer).lock.withLock { _ in
            result = body(&timer.stateStorage)
        }
        return result.unsafelyUnwrapped
    }
}
