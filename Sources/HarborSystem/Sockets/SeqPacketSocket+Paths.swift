// Harbor — SEQPACKET sockets bound to a path: the bootstrap server's and its clients'.
import CHarborLinux
import Glibc

extension SeqPacketSocket {
    /// Connects to the SEQPACKET socket at `path`, with `SO_PASSCRED` set so
    /// the server's packets carry its credentials. Blocking, close-on-exec.
    /// C: `socket`, `setsockopt(SO_PASSCRED)`, `connect`.
    package static func connect(to path: String) throws(SystemError) -> SharedDescriptor {
        let fd = try systemCall("socket") {
            Glibc.socket(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC, 0)
        }
        let owned = SharedDescriptor(taking: fd)
        try passCredentials(fd)
        _ = try withAddress(path) { address, length throws(SystemError) in
            try systemCall("connect") { Glibc.connect(fd, address, length) }
        }
        return owned
    }

    /// Binds and listens on `path` (non-blocking, close-on-exec), mode 0666:
    /// who may do what is decided per request by the kernel's credentials,
    /// not by file permissions. The parent directory must exist.
    /// C: `socket`, `bind`, `chmod`, `listen`.
    package static func listen(at path: String, backlog: CInt = 128) throws(SystemError) -> SharedDescriptor {
        let fd = try systemCall("socket") {
            Glibc.socket(AF_UNIX, charbor_SOCK_SEQPACKET | charbor_SOCK_CLOEXEC | charbor_SOCK_NONBLOCK, 0)
        }
        let owned = SharedDescriptor(taking: fd)
        _ = try withAddress(path) { address, length throws(SystemError) in
            try systemCall("bind") { bind(fd, address, length) }
        }
        try FileSystem.setMode(path, 0o666)
        _ = try systemCall("listen") { Glibc.listen(fd, backlog) }
        return owned
    }

    /// Accepts one waiting connection, non-blocking and close-on-exec from
    /// the start; nil if none waits. C: `accept4(SOCK_CLOEXEC | SOCK_NONBLOCK)`.
    package static func accept(on listener: CInt) throws(SystemError) -> SharedDescriptor? {
        guard let fd = try systemCallOrWouldBlock("accept4", {
            charbor_accept4(listener, charbor_SOCK_CLOEXEC | charbor_SOCK_NONBLOCK)
        }) else { return nil }
        return SharedDescriptor(taking: fd)
    }

    /// The uid of the process at the other end of a connected socket, as the
    /// kernel recorded it when that process connected (`SO_PEERCRED`); nil if
    /// the socket is gone.
    package static func peerUID(_ fd: CInt) -> uid_t? {
        (try? creator(fd))?.uid
    }

    /// Whether `fd` is a listening `SOCK_SEQPACKET` socket (what socket
    /// activation must pass). C: `getsockopt(SO_TYPE, SO_ACCEPTCONN)`.
    package static func isListening(_ fd: CInt) -> Bool {
        guard isSeqPacket(fd) else { return false }
        var listening: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
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
