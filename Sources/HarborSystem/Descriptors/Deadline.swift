// Harbor — monotonic time for timeouts and deadlines.
import CHarborLinux
import Glibc

/// A point on `CLOCK_MONOTONIC`, in nanoseconds since boot (not counting
/// suspend). Timeouts turn into deadlines once, at the start of a call, so a
/// wait that is interrupted and resumed never waits longer than asked.
package struct MonotonicInstant: Comparable, Hashable, Sendable {
    package var nanoseconds: Int64

    package init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The current time. C: `clock_gettime(CLOCK_MONOTONIC)` (a vDSO call, no syscall).
    package static var now: MonotonicInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return MonotonicInstant(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }

    package static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    package func adding(_ duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds &+ duration.saturatingNanoseconds)
    }

    package var asTimespec: timespec {
        Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}

extension Duration {
    /// This duration in whole nanoseconds, clamped to `Int64` (negative becomes 0).
    package var saturatingNanoseconds: Int64 {
        // Under about 9 s the attoseconds fit an Int64 and one 64-bit
        // division (by a constant: a multiply) does; `components` divides
        // 128 bits, tens of nanoseconds on every timer made or moved.
        if let small = Int64(exactly: attoseconds) { return small < 0 ? 0 : small / 1_000_000_000 }
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        if seconds >= Int64.max / 1_000_000_000 { return Int64.max / 2 }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// When a blocking call gives up: never, at once, or at an instant.
package enum WaitDeadline: Sendable {
    case never
    case immediately
    case at(MonotonicInstant)

    /// `nil` means wait forever; zero means try once.
    package init(timeout: Duration?) {
        guard let timeout else { self = .never; return }
        if timeout <= .zero { self = .immediately; return }
        self = .at(MonotonicInstant.now.adding(timeout))
    }

    /// Time left as a `timespec` for ppoll, `nil` for "forever"; zero once passed.
    package func remaining() -> timespec? {
        switch self {
        case .never: return nil
        case .immediately: return Glibc.timespec(tv_sec: 0, tv_nsec: 0)
        case .at(let instant):
            let left = max(0, instant.nanoseconds - MonotonicInstant.now.nanoseconds)
            return Glibc.timespec(tv_sec: Int(left / 1_000_000_000), tv_nsec: Int(left % 1_000_000_000))
        }
    }

    package var hasPassed: Bool {
        switch self {
        case .never: return false
        case .immediately: return true
        case .at(let instant): return MonotonicInstant.now >= instant
        }
    }
}
