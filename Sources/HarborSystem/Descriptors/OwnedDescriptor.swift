// Harbor — a file descriptor with exactly one owner, closed exactly once.
import CHarborLinux
import Glibc

/// A file descriptor owned by this value: closed when the value dies, unless
/// it was handed on with ``relinquish()``.
///
/// `~Copyable`, so the compiler rules out the two classic descriptor bugs:
/// closing twice and using after close. The stored property is a plain `CInt`,
/// which is what lets `relinquish()` use `discard self`.
///
/// **Thread safety:** the value may move between threads; concurrent use of
/// the same descriptor is the kernel's business (reads and writes are atomic
/// per call).
package struct OwnedDescriptor: ~Copyable, @unchecked Sendable {
    // @unchecked: the only state is an immutable CInt; ownership is unique
    // (~Copyable), so no two threads can close it.

    /// The raw descriptor number. Valid for as long as `self` lives.
    package let rawValue: CInt

    /// Takes ownership of `rawValue`, which must be an open descriptor that
    /// nothing else will close.
    package init(taking rawValue: CInt) {
        precondition(rawValue >= 0, "OwnedDescriptor needs an open descriptor, got \(rawValue)")
        self.rawValue = rawValue
    }

    deinit {
        // EINTR from close(2) on Linux still released the descriptor: never retry.
        _ = Glibc.close(rawValue)
    }

    /// Gives up ownership and returns the raw number, which the caller must close.
    package consuming func relinquish() -> CInt {
        let value = rawValue
        discard self
        return value
    }
}
