// Harbor — waiting for descriptors with a precise deadline (ppoll, in one place).
import CHarborLinux
import Glibc

/// Waits until `fd` polls readable or `deadline` passes; returns whether it is
/// readable. Signals do not shorten the wait: it resumes with the time left.
///
/// C: `ppoll(2)` (nanosecond timeout, unlike `poll`'s milliseconds).
@inline(never)
package func waitUntilReadable(_ fd: CInt, deadline: WaitDeadline) throws(SystemError) -> Bool {
    while true {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = withUnsafeMutablePointer(to: &entry) { pointer in
            pollDescriptors(UnsafeMutableBufferPointer(start: pointer, count: 1), deadline: deadline)
        }
        if result > 0 { return true }
        if result == 0 { return false }
        let code = charbor_errno()
        if code == EINTR {
            if deadline.hasPassed { return false }
            continue
        }
        throw SystemError(errno: code, call: "ppoll")
    }
}

/// Puts the calling thread to sleep for `duration` (a signal may end it
/// sooner). For polling loops that wait for another thread. C: `ppoll(2)`
/// over no descriptors.
package func pauseThread(for duration: Duration) {
    _ = pollDescriptors(UnsafeMutableBufferPointer(start: nil, count: 0), deadline: WaitDeadline(timeout: duration))
}

/// Checks `done` every `interval` until it holds (true) or `timeout` passes
/// (false): the waits for another thread to let go of something, which has
/// no descriptor to wait on.
package func pollUntil(timeout: Duration, every interval: Duration, _ done: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !done() {
        if ContinuousClock.now >= deadline { return false }
        pauseThread(for: interval)
    }
    return true
}

/// One `ppoll(2)` over `entries` until `deadline` (nanosecond timeout):
/// how many have events (their `revents` set), 0 when the deadline passed,
/// -1 with errno set on failure (EINTR included: callers decide).
package func pollDescriptors(_ entries: UnsafeMutableBufferPointer<pollfd>, deadline: WaitDeadline) -> CInt {
    if var spec = deadline.remaining() {
        return charbor_ppoll(entries.baseAddress, nfds_t(entries.count), &spec)
    }
    return charbor_ppoll(entries.baseAddress, nfds_t(entries.count), nil)
}
