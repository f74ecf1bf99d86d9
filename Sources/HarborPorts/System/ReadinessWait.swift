// Harbor — waiting for one descriptor with a precise deadline.
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
        let result: CInt
        if var spec = deadline.remaining() {
            result = charbor_ppoll(&entry, 1, &spec)
        } else {
            result = charbor_ppoll(&entry, 1, nil)
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
