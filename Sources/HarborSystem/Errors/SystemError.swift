// Harbor — the one error type the system-call layer produces.
import CHarborLinux
import Glibc
import SystemPackage

/// A failed Linux system call: the `errno` it returned and the call's name.
///
/// Every wrapper in `System/` throws this and nothing else, so a log line always
/// says which call failed (`epoll_ctl: Bad file descriptor`), not just why.
/// Higher layers wrap it in their own errors (``PortError`` keeps it as
/// `underlying`).
///
/// **Thread safety:** a value; any thread.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value, typed by swift-system.
    public let errno: Errno
    /// The name of the system call that failed, for example `"eventfd"`.
    public let call: String

    /// The raw `errno` number, for code that does not import SystemPackage.
    public var code: CInt { errno.rawValue }

    package init(errno code: CInt, call: StaticString) {
        self.errno = Errno(rawValue: code)
        self.call = String(describing: call)
    }

    package init(_ errno: Errno, call: String) {
        self.errno = errno
        self.call = call
    }

    public var description: String { "\(call): \(errno) (errno \(errno.rawValue))" }
}
