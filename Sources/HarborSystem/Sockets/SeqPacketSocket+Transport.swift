// Harbor — the calls a port's transport makes on its connections, beside
// sending and receiving (SeqPacketSocket.swift): options, hang-up, waiting
// for room, and what a failed send means.
import CHarborLinux
import Glibc

extension SeqPacketSocket {
    /// Has the kernel attach the sender's pid, uid and gid to every packet
    /// received on `fd`. C: `setsockopt(SO_PASSCRED, 1)`.
    package static func passCredentials(_ fd: CInt) throws(SystemError) {
        try setOption(fd, charbor_SO_PASSCRED, 1)
    }

    /// Has the kernel attach, to every packet received on `fd`, a pidfd on
    /// the sending process taken when it sent (SCM_PIDFD), so the sender
    /// can be examined with no pid that might since name another process.
    /// Returns false where the kernel has no such option (before Linux 6.5:
    /// `ENOPROTOOPT`). C: `setsockopt(SO_PASSPIDFD, 1)`.
    /// - Throws: any other `setsockopt` error.
    package static func passSenderPidfds(_ fd: CInt) throws(SystemError) -> Bool {
        do {
            try setOption(fd, charbor_SO_PASSPIDFD, 1)
            return true
        } catch where error.code == ENOPROTOOPT {
            return false
        }
    }

    /// Has the kernel stop attaching senders' pidfds to packets received on
    /// `fd` (a receiving end moved in from a process that asked for them).
    /// A kernel without the option has nothing to stop.
    /// C: `setsockopt(SO_PASSPIDFD, 0)`.
    /// - Throws: any `setsockopt` error but `ENOPROTOOPT`.
    package static func stopSenderPidfds(_ fd: CInt) throws(SystemError) {
        do {
            try setOption(fd, charbor_SO_PASSPIDFD, 0)
        } catch where error.code == ENOPROTOOPT {
            return
        }
    }

    /// Whether the kernel attaches senders' pidfds to packets received on
    /// `fd` (false on a kernel without the option).
    /// C: `getsockopt(SO_PASSPIDFD)`.
    package static func passesSenderPidfds(_ fd: CInt) -> Bool {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        return getsockopt(fd, SOL_SOCKET, charbor_SO_PASSPIDFD, &value, &length) == 0 && value != 0
    }

    /// Sets the send buffer of `fd` to `bytes` (the kernel caps it at
    /// `net.core.wmem_max`). C: `setsockopt(SO_SNDBUF)`.
    package static func setSendBuffer(_ fd: CInt, bytes: CInt) throws(SystemError) {
        try setOption(fd, charbor_SO_SNDBUF, bytes)
    }

    /// Whether every receiving end of `fd`'s connection is closed, without
    /// waiting. C: `poll(2)`, timeout 0.
    package static func hasHungUp(_ fd: CInt) -> Bool {
        pollNow(fd, events: Int16(POLLOUT)) & Int16(POLLHUP | POLLERR) != 0
    }

    /// What `waitForRoom` saw.
    package struct Readiness {
        /// The socket has room to write (when asked).
        package var writable = false
        /// The other descriptor polls readable.
        package var otherReadable = false
        /// Every receiving end of the socket is closed.
        package var hungUp = false
    }

    /// Waits until `deadline` for room on `fd` (when `forRoom`), for `other`
    /// to poll readable, or for the connection to hang up. One wait: a
    /// signal or an error ends it early with nothing seen, and the caller
    /// looks again. C: `ppoll(2)`.
    package static func waitForRoom(
        _ fd: CInt, forRoom: Bool, orReadable other: CInt?, deadline: WaitDeadline
    ) -> Readiness {
        let events = forRoom ? Int16(POLLOUT) : 0
        var entries = (pollfd(fd: fd, events: events, revents: 0),
                       pollfd(fd: other ?? -1, events: Int16(POLLIN), revents: 0))
        let count = other == nil ? 1 : 2
        // The two entries of a homogeneous tuple lie contiguous, like an array's.
        let result = withUnsafeMutablePointer(to: &entries) { pair in
            pair.withMemoryRebound(to: pollfd.self, capacity: 2) { first in
                pollDescriptors(UnsafeMutableBufferPointer(start: first, count: count), deadline: deadline)
            }
        }
        guard result > 0 else { return Readiness() }
        return Readiness(writable: entries.0.revents & events != 0, otherReadable: count > 1 && entries.1.revents != 0,
                         hungUp: entries.0.revents & Int16(POLLHUP | POLLERR) != 0)
    }
}

extension SystemError {
    /// A send failed because the receiving end is gone (EPIPE, ECONNRESET,
    /// ENOTCONN).
    package var isPeerGone: Bool { code == EPIPE || code == ECONNRESET || code == ENOTCONN }

    /// A send failed because the packet is over the socket's limit (EMSGSIZE).
    package var isMessageTooLarge: Bool { code == EMSGSIZE }
}

/// The process's soft limit on open descriptors, or nil if it cannot be
/// read. `RLIM_INFINITY` comes back as `Int.max`. C: `getrlimit(RLIMIT_NOFILE)`.
package func openDescriptorLimit() -> Int? {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    return Int(clamping: limit.rlim_cur)
}
