// Harbor — the bootstrap socket: connecting, listening and accepting (AF_UNIX SOCK_SEQPACKET).
import CHarborLinux
import Glibc
import HarborPorts

/// The few socket calls the bootstrap transport needs. Errors come back as
/// `SystemError` (errno + call).
package enum UnixSocket {
    /// Connects to the SEQPACKET socket at `path`, with `SO_PASSCRED` set so
    /// the server's packets carry its credentials.
    package static func connect(to path: String) throws(SystemError) -> SharedDescriptor {
        let fd = try systemCall("socket") {
            Glibc.socket(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC, 0)
        }
        let socket = SharedDescriptor(taking: fd)
        try SeqPacketSocket.setOption(fd, charbor_SO_PASSCRED, 1)
        _ = try withAddress(path) { address, length throws(SystemError) in
            try systemCall("connect") { Glibc.connect(fd, address, length) }
        }
        return socket
    }

    /// Binds and listens on `path` (non-blocking, close-on-exec), mode 0666:
    /// who may do what is decided per request by the kernel's credentials,
    /// not by file permissions. The parent directory must exist.
    package static func listen(at path: String, backlog: CInt = 128) throws(SystemError) -> SharedDescriptor {
        let fd = try systemCall("socket") {
            Glibc.socket(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC | charbor_SOCK_NONBLOCK, 0)
        }
        let socket = SharedDescriptor(taking: fd)
        _ = try withAddress(path) { address, length throws(SystemError) in
            try systemCall("bind") { bind(fd, address, length) }
        }
        _ = try systemCall("chmod") { chmod(path, 0o666) }
        _ = try systemCall("listen") { Glibc.listen(fd, backlog) }
        return socket
    }

    /// Accepts one waiting connection, or nil if none waits.
    package static func accept(on listener: CInt) throws(SystemError) -> SharedDescriptor? {
        guard let fd = try systemCallOrWouldBlock("accept", { Glibc.accept(listener, nil, nil) }) else { return nil }
        // No accept4 in Glibc's module: the flags right after. The server
        // spawns children only from its own loop thread, after this returns.
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        return SharedDescriptor(taking: fd)
    }

    /// The uid of the process at the other end of a connected socket, as the
    /// kernel recorded it when that process connected (`SO_PEERCRED`); nil if
    /// the socket is gone.
    package static func peerUID(_ fd: CInt) -> uid_t? {
        var credentials = charbor_ucred(pid: 0, uid: 0, gid: 0)
        var length = socklen_t(MemoryLayout<charbor_ucred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              length == socklen_t(MemoryLayout<charbor_ucred>.size) else { return nil }
        return credentials.uid
    }

    /// Whether `fd` is a listening `SOCK_SEQPACKET` socket (what socket activation must pass).
    package static func isListeningSeqPacket(_ fd: CInt) -> Bool {
        var type: CInt = 0
        var listening: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == charbor_SOCK_SEQPACKET else { return false }
        length = socklen_t(MemoryLayout<CInt>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 && listening != 0
    }

    private static func withAddress<Result>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> Result
    ) throws(SystemError) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw SystemError(errno: ENAMETOOLONG, call: "sockaddr_un")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        return try withUnsafePointer(to: &address) { pointer throws(SystemError) -> Result in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemError) -> Result in
                try body(raw, length)
            }
        }
    }
}
