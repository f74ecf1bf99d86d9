// Harbor — the retry-and-classify policy for every system call, in one place.
//
// Wrappers call `systemCall` with a closure that makes exactly one libc call.
// The policy (swift-system's `valueOrErrno`, NIO's `syscall(blocking:)`):
// - EINTR is retried unless the caller says otherwise;
// - EAGAIN/EWOULDBLOCK is a value (`nil`), never an error, where a wrapper
//   asks for it with `systemCallOrWouldBlock`;
// - anything else throws a `SystemError` naming the call.
// `close` does not come through here: a close interrupted by a signal has
// still released the descriptor on Linux, so it is never retried.
import CHarborLinux
import Glibc

/// Runs `body` until it does not fail with EINTR; throws its errno otherwise.
@inline(__always)
package func systemCall<Result: FixedWidthInteger>(
    _ name: StaticString,
    retryOnInterrupt: Bool = true,
    _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = charbor_errno()
        if code == EINTR && retryOnInterrupt { continue }
        throw SystemError(errno: code, call: name)
    }
}

/// Like ``systemCall(_:retryOnInterrupt:_:)``, but EAGAIN comes back as `nil`.
@inline(__always)
package func systemCallOrWouldBlock<Result: FixedWidthInteger>(
    _ name: StaticString,
    _ body: () -> Result
) throws(SystemError) -> Result? {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = charbor_errno()
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return nil }
        throw SystemError(errno: code, call: name)
    }
}
