// Harbor — the locks that guard timers' state: a fixed table shared by all timers, picked by address.
//
// A timer used to own a HarborLock, which is a pthread mutex in a heap
// allocation of its own: a second malloc and free per timer, and its state
// one pointer hop away from the object in another cold cache line. At a
// million timers that was most of the cost of adding one. The state now
// lives in the object, and the lock is one of `StripedLocks.count` mutexes
// (a "striped" lock): two timers may share a stripe, which costs only
// contention, since no code holds one timer's lock while taking another's
// (the lock order is the loop's lock, then one timer's). ThreadSanitizer
// still sees every access ordered by a pthread mutex.
//
// The table is `StripedLocks`, plain pthread mutexes in one C array, not
// objects: a timer's lock is taken four times per fire, and an object per
// stripe cost a retain and a release on each (a tenth of a timer's in-cache
// cost), and a Swift global a `swift_once` call on each.
import HarborPorts
import HarborSystem

/// The timers' choice of stripe.
enum TimerLockStripes {
    /// The stripe of `timer`: its address mixed (objects are 16-aligned and
    /// often allocated in runs) and cut to the table's size (a power of two).
    @inline(__always)
    static func stripe(of timer: LoopTimer) -> UInt {
        // The address itself: `ObjectIdentifier.hashValue` runs SipHash,
        // tens of nanoseconds on every lock.
        let address = UInt(bitPattern: ObjectIdentifier(timer))
        return (address &* 0x9E37_79B9_7F4A_7C15) >> (UInt.bitWidth - 8)
    }
}

/// `LoopTimer.state`: the timer's state under its stripe's lock, with
/// `HarborLock`'s `withLock` shape. Not recursive: a body must not take the
/// lock of this or any other timer.
struct TimerStateLock {
    /// Unretained and borrowed for the call: a strong or `unowned(unsafe)`
    /// reference here cost a retain and release around every lock.
    let timer: Unmanaged<LoopTimer>

    @inline(__always)
    func withLock<Result>(_ body: (inout LoopTimer.State) -> Result) -> Result {
        timer._withUnsafeGuaranteedRef { timer in
            StripedLocks.withStripe(TimerLockStripes.stripe(of: timer)) { body(&timer.storage.state.pointee) }
        }
    }
}
