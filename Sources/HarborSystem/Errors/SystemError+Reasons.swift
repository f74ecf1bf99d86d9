// Harbor — what an errno means, for errors of the layers above.
import CHarborLinux
import Glibc

extension SystemError {
    /// The C library's text for errno `code` ("No such file or directory").
    /// C: `strerror`.
    package static func reason(_ code: CInt) -> String { String(cString: strerror(code)) }

    /// The call failed because the process does not exist (ESRCH).
    package var isNoSuchProcess: Bool { code == ESRCH }

    /// The call failed because something was already there (EEXIST).
    package var isAlreadyExisting: Bool { code == EEXIST }
}

extension SystemError {
    /// EBADF from `call`: for a descriptor that is gone before the call
    /// could be made (a waitset of a loop that terminated).
    package static func badDescriptor(_ call: StaticString) -> SystemError { SystemError(errno: EBADF, call: call) }
}
