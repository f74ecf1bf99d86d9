// Harbor — calls on raw descriptor numbers that something else owns.
import CHarborLinux
import Glibc

/// Flags, reads and closes on descriptors held as plain numbers: ones
/// libdispatch, systemd or the caller owns, which no ``OwnedDescriptor``
/// holds.
package enum DescriptorIO {
    /// Makes reads and writes on `fd` return EAGAIN instead of blocking.
    /// C: `fcntl(F_GETFL/F_SETFL, O_NONBLOCK)`; a no-op if already set.
    package static func setNonBlocking(_ fd: CInt) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK == 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// A new descriptor for `fd`'s open file, close-on-exec, owned by the
    /// caller. C: `fcntl(F_DUPFD_CLOEXEC)`.
    package static func duplicate(_ fd: CInt) throws(SystemError) -> CInt {
        try systemCall("fcntl(F_DUPFD_CLOEXEC)") { fcntl(fd, F_DUPFD_CLOEXEC, CInt(0)) }
    }

    /// Closes `fd` in every program this process executes. C: `fcntl(F_SETFD, FD_CLOEXEC)`.
    package static func setCloseOnExec(_ fd: CInt) { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

    /// Reads and resets an eventfd's counter, or a timerfd's expirations,
    /// without waiting; nil if it was zero (or `fd` is not readable).
    /// C: `read(2)` of 8 bytes, retried on EINTR.
    @discardableResult
    package static func drainCounter(_ fd: CInt) -> UInt64? {
        var value: UInt64 = 0
        let count = try? systemCallOrWouldBlock("read") { Glibc.read(fd, &value, 8) }
        return count.flatMap { $0 } == 8 ? value : nil
    }

    /// Adds `value` to an eventfd counter that may belong to another
    /// process, without waiting: a descriptor that is full, closed at the
    /// other end or not an eventfd at all costs one failed write and nothing
    /// else. C: `write(2)` of 8 bytes.
    package static func addToCounter(_ fd: CInt, _ value: UInt64) {
        var value = value
        _ = Glibc.write(fd, &value, 8)
    }

    /// Reads up to `buffer.count` bytes; the count, 0 at end of file, nil on
    /// an error or when nothing waits (EAGAIN). C: `read(2)`, retried on EINTR.
    package static func read(_ fd: CInt, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        (try? systemCallOrWouldBlock("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }).flatMap { $0 }
    }

    /// Closes `fd`, never retried (Linux releases it even on EINTR). C: `close(2)`.
    package static func close(_ fd: CInt) { _ = Glibc.close(fd) }
}

/// Memory a C library allocated and handed over (libsystemd's name lists).
package enum CAllocation {
    /// Releases memory from `malloc`, `strdup` or a library that says to
    /// `free` what it returns. C: `free(3)`.
    package static func free(_ pointer: UnsafeMutableRawPointer?) { Glibc.free(pointer) }
}
