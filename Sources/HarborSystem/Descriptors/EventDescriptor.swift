// Harbor — eventfd(2): the cheapest descriptor that can be made readable.
import CHarborLinux
import Glibc

/// An owned eventfd: a 64-bit counter that polls readable while it is non-zero.
///
/// Harbor uses it two ways: as a port's readiness flag (set to 1 when the
/// queue fills from empty, drained when it empties again) and as a run loop's
/// wake-up. Created `EFD_CLOEXEC | EFD_NONBLOCK`.
///
/// **Thread safety:** any thread; each call is one atomic syscall.
package struct EventDescriptor: ~Copyable, Sendable {
    package let descriptor: OwnedDescriptor

    /// C: `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`.
    package init() throws(SystemError) {
        let fd = try systemCall("eventfd") { eventfd(0, Int32(charbor_EFD_CLOEXEC | charbor_EFD_NONBLOCK)) }
        descriptor = OwnedDescriptor(taking: fd)
    }

    package var rawValue: CInt { descriptor.rawValue }

    /// Adds `value` to the counter, making the descriptor readable. C: `write(2)`.
    ///
    /// Never blocks: the counter saturates only after 2^64-2 unread signals.
    @inline(never)
    package func signal(_ value: UInt64 = 1) {
        var value = value
        // EAGAIN would mean the counter is saturated: it is readable either way.
        _ = try? systemCallOrWouldBlock("eventfd_write") { Glibc.write(rawValue, &value, 8) }
    }

    /// Reads and resets the counter; returns 0 if it was already zero. C: `read(2)`.
    @inline(never)
    @discardableResult
    package func drain() -> UInt64 { DescriptorIO.drainCounter(rawValue) ?? 0 }
}
